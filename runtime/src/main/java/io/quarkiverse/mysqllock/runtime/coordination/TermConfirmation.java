package io.quarkiverse.mysqllock.runtime.coordination;

import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;

/**
 * Strict leadership (NAMED): a term begins only the fleet's largest window (+ a margin) after its grant, and lasts while
 * its lock keeps being confirmed on the server within its own window; a former leader whose session the server ended
 * therefore stops leading before the next term can begin, paused or not, whatever keepalive interval it runs with.
 *
 * @param window the windows of a term granted now (asked once per grant: it may read the fleet's)
 * @param check whether a handle is valid and was confirmed within so many nanoseconds
 */
public record TermConfirmation(Supplier<Window> window, BiPredicate<LockHandle, Long> check) {

    /**
     * A term's windows.
     *
     * @param confirmNanos the term lasts while its lock is confirmed within this; 0 for none (a term begins at its grant
     *        and lasts while its lock is valid: LEASE, whose validity is bounded in time already, or NAMED's instant
     *        hand-over, in a fleet whose every instance has it)
     * @param graceNanos how long the term waits after its grant before it begins: the largest window of the fleet's live
     *        instances (they may run with other keepalive intervals), at least its own
     */
    public record Window(long confirmNanos, long graceNanos) {
        /** No confirmation: a term begins at its grant. */
        public static final Window NONE = new Window(0, 0);
    }

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
