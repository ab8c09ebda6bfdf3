package io.quarkiverse.mysqllock.test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * Work on another thread, for tests whose tasks block (on a lock, a latch, an HTTP call). Not the common pool:
 * on 2 cores it may have a single thread, and one blocked task would starve the next.
 */
public final class Background {

    private static final ExecutorService THREADS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "test-background");
        thread.setDaemon(true);
        return thread;
    });

    private Background() {
    }

    public static <T> CompletableFuture<T> supply(Supplier<T> work) {
        return CompletableFuture.supplyAsync(work, THREADS);
    }

    public static CompletableFuture<Void> run(Runnable work) {
        return CompletableFuture.runAsync(work, THREADS);
    }

    public static CompletableFuture<Void> run(Runnable work, Executor executor) {
        return CompletableFuture.runAsync(work, executor);
    }
}
