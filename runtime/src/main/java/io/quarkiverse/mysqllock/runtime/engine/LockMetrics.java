package io.quarkiverse.mysqllock.runtime.engine;

import java.time.Duration;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.jobs.RunOutcome;

/**
 * What the engines report for metrics. {@link #NONE} unless Micrometer is present; never tagged with the names of the
 * locks taken, whose number is unbounded. The one exception is a scheduled job's name ({@link #jobRun},
 * {@link #jobSilence}): a lock name too, bounded by the application's code where the job's name is written out, and not
 * where it is built from the method's parameters.
 */
public interface LockMetrics {

    LockMetrics NONE = new LockMetrics() {
    };

    enum Outcome {
        /** granted */
        ACQUIRED,
        /** held by someone else, one attempt (no wait) */
        BUSY,
        /** still held by someone else when the wait ended */
        TIMEOUT,
        /** deadlock, pool exhausted, database error */
        ERROR
    }

    /** How a call of a {@code @Locked} method ended. */
    enum MethodOutcome {
        /** it ran, and its lock was held throughout */
        RAN,
        /** it threw, its lock held throughout */
        FAILED,
        /** its lock was lost while it ran (whether it returned or threw) */
        LOST,
        /** it did not run: its lock was busy ({@code onBusy = SKIP}), or its scheduled tick had run elsewhere */
        SKIPPED,
        /** it did not run: its lock could not be had ({@code onBusy = FAIL}: busy, time-out, database error) */
        NOT_ACQUIRED;

        /** How a call that ran ended: a loss while it ran first, then whether it threw. */
        public static MethodOutcome ran(LockLostException lost, Throwable failure) {
            return lost != null ? LOST : failure != null ? FAILED : RAN;
        }
    }

    /**
     * A call of a {@code @Locked} method ended after this long, the acquisition included. {@code method} is
     * {@code <class>#<method>}: a tag bounded by the application's code, never the resolved lock name.
     */
    default void method(String method, MethodOutcome outcome, long nanos) {
    }

    /**
     * A run of a scheduled job ended after this long (the lock's acquisition excluded), or its claimer skipped a tick
     * (then 0). {@code job} is the job's name, bounded by the application's code.
     */
    default void jobRun(String job, RunOutcome outcome, long nanos) {
    }

    /**
     * A scheduled job this instance fires: a gauge of how long it has gone without a success anywhere in the fleet, in
     * seconds ({@code since} answers null while unknown).
     */
    default void jobSilence(String job, Supplier<Duration> since) {
    }

    /** An acquisition ended, after waiting this long. */
    default void acquisition(LockMode engine, Outcome outcome, long waitNanos) {
    }

    /** A hold ended (released, or lost and then released) after this long. */
    default void held(LockMode engine, long holdNanos) {
    }

    default void lost(LockMode engine, LockLostException.Reason cause) {
    }

    /** A renewal statement renewed this many leases. */
    default void renewed(int leases) {
    }

    /** The engine was chosen: gauges of the locks it holds and the connections it keeps out of the pool. */
    default void engineChosen(LockMode engine, IntSupplier locksHeld, IntSupplier pinnedConnections) {
    }

    /**
     * The manager closed: its gauges go (a registry that outlives the application, such as Micrometer's global one in
     * dev mode or between test classes, would otherwise keep reading the closed engine for the next application).
     */
    default void close() {
    }
}
