package io.quarkiverse.mysqllock.test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waiting for a condition in tests: polled every few milliseconds, failing with what was awaited at the deadline. */
public final class Await {

    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private Await() {
    }

    public static void until(String what, Duration deadline, BooleanSupplier condition) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("Timed out after " + deadline.toMillis() + " ms waiting for " + what);
            }
            LockSupport.parkNanos(POLL_NANOS);
            if (Thread.interrupted()) {
                throw new AssertionError("Interrupted waiting for " + what);
            }
        }
    }
}
