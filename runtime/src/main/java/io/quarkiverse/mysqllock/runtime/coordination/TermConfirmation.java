package io.quarkiverse.mysqllock.runtime.coordination;

import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;

/**
 * Strict leadership (NAMED): a term begins only {@code window} (+ a margin) after its grant, and lasts while its lock
 * keeps being confirmed on the server within {@code window}; a former leader whose session the server ended therefore
 * stops leading before the next term can begin, paused or not.
 *
 * @param windowNanos the confirmation window when a term is granted; 0 for none (a term begins at its grant and lasts
 *        while its lock is valid: LEASE, whose validity is bounded in time already, or NAMED's instant hand-over)
 * @param graceNanos given a term's own window, how long it waits after its grant before it begins: the largest window
 *        of the fleet's live instances (they may run with other keepalive intervals), at least its own
 * @param check whether a handle is valid and was confirmed within so many nanoseconds
 */
public record TermConfirmation(LongSupplier windowNanos, LongUnaryOperator graceNanos,
        BiPredicate<LockHandle, Long> check) {

    /** Beyond the confirmation window, how long a new term waits after its grant (the clocks' and checks' slack). */
    static final long GRACE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** How often a strict term's confirmation is looked at: a tenth of its window, at most 100 ms. */
    static long pollNanos(long window) {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(5), Math.min(window / 10, TimeUnit.MILLISECONDS.toNanos(100)));
    }

    /** The loss of a strict term whose lock was not confirmed within its window. */
    static LockLostException unconfirmed(String lockName, long window) {
        return new LockLostException(lockName, LockLostException.Reason.CONNECTION_LOST, "Lock '" + lockName
                + "' was not confirmed on the server within " + TimeUnit.NANOSECONDS.toMillis(window) + " ms (two"
                + " keepalive intervals): this instance stops leading before another could begin a term", null);
    }
}
