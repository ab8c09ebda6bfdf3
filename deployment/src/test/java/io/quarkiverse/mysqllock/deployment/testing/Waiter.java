package io.quarkiverse.mysqllock.deployment.testing;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A call made on a thread of its own, for a test to interrupt: when and how it ended, and whether its thread was still
 * interrupted then.
 */
public final class Waiter<T> {

    public final Thread thread;
    public final CompletableFuture<T> result = new CompletableFuture<>();
    public volatile long endedAt;
    public volatile boolean interruptKept;

    public Waiter(Callable<T> call) {
        thread = new Thread(() -> {
            T value = null;
            Throwable failure = null;
            try {
                value = call.call();
            } catch (Throwable e) {
                failure = e;
            }
            endedAt = System.nanoTime();
            interruptKept = Thread.currentThread().isInterrupted();
            if (failure == null) {
                result.complete(value);
            } else {
                result.completeExceptionally(failure);
            }
        }, "interrupted-waiter");
        thread.setDaemon(true);
        thread.start();
    }

    /** Interrupts the call: how long it took to end after the interrupt. Fails if it has not ended 20 s later. */
    public Duration interruptAndTime() throws InterruptedException {
        long interruptedAt = System.nanoTime();
        thread.interrupt();
        try {
            result.get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            // the outcome is the test's to assert
        } catch (TimeoutException e) {
            throw new AssertionError("The call had not ended 20 s after its interrupt: it waits out its wait", e);
        }
        return Duration.ofNanos(endedAt - interruptedAt);
    }

    /** What the call threw, or null. */
    public Throwable failure() {
        return result.handle((value, failure) -> failure).join();
    }
}
