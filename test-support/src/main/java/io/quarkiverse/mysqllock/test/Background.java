package io.quarkiverse.mysqllock.test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Work on a new thread of its own, for tests whose tasks block (on a lock, a latch, an HTTP call) or keep holding a
 * lock after they return. Not the common pool: on 2 cores it may have a single thread, and one blocked task starves
 * the next. Not a pool either: a pooled thread that still owns a lock would make the next task on it re-entrant.
 */
public final class Background {

    private static final Executor NEW_THREAD = runnable -> {
        Thread thread = new Thread(runnable, "test-background");
        thread.setDaemon(true);
        thread.start();
    };

    private Background() {
    }

    public static <T> CompletableFuture<T> supply(Supplier<T> work) {
        return CompletableFuture.supplyAsync(work, NEW_THREAD);
    }

    public static CompletableFuture<Void> run(Runnable work) {
        return CompletableFuture.runAsync(work, NEW_THREAD);
    }

    public static CompletableFuture<Void> run(Runnable work, Executor executor) {
        return CompletableFuture.runAsync(work, executor);
    }
}
