package io.quarkiverse.mysqllock.runtime.coordination;

import io.quarkiverse.mysqllock.LeadershipGranted;

/**
 * Work the extension itself runs for each term ({@code @WhileLeader}), told directly by the election rather than
 * through CDI observers, which an application's failing observer could keep from being told.
 */
public interface TermWork {

    /** The term began: start its work, without blocking. */
    void start(LeadershipGranted granted);

    /** The term ends: tell its work to stop, without blocking. */
    void stop(long term);

    /**
     * Waits up to {@code nanos} for the term's work to stop (never for the calling thread's own); whether it stopped.
     */
    boolean awaitStopped(long term, long nanos);
}
