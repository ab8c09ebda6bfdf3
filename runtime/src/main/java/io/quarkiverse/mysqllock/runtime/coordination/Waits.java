package io.quarkiverse.mysqllock.runtime.coordination;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

import io.quarkiverse.mysqllock.LockNotAcquiredException;

/** Deadlines of the primitives' waits. */
final class Waits {

    /** Longer waits are cut to this, as the manager cuts them; it keeps deadline arithmetic far from overflow. */
    private static final Duration MAX_WAIT = Duration.ofDays(365);

    private Waits() {
    }

    /** The {@link System#nanoTime()} at which a wait of {@code wait} ends. */
    static long deadline(String what, Duration wait) {
        if (wait == null || wait.isNegative()) {
            throw new IllegalArgumentException("The wait for " + what + " must be zero or positive, not " + wait);
        }
        return System.nanoTime() + (wait.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : wait).toNanos();
    }

    /**
     * Pauses a polling wait for {@code nanos}; an interrupt ends the wait of {@code what} (the flag is kept) with a
     * {@code LockNotAcquiredException}, as the engines end theirs.
     */
    static void pause(String what, long startNanos, long nanos) {
        LockSupport.parkNanos(nanos);
        if (Thread.currentThread().isInterrupted()) {
            throw new LockNotAcquiredException(what, Duration.ofNanos(System.nanoTime() - startNanos),
                    LockNotAcquiredException.Reason.INTERRUPTED, null, "Interrupted while waiting for " + what,
                    new InterruptedException("Interrupted while waiting for " + what));
        }
    }

    /** What is left of a wait ending at {@code deadline}, zero if nothing. */
    static Duration left(long deadline) {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }
}
