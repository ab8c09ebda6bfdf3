package io.quarkiverse.mysqllock.jobs;

/**
 * What a scheduled job does about the ticks no instance of the fleet ran: every instance down, or the job paused
 * ({@code quarkus.mysql-lock.jobs."<job>".missed-ticks}). A catch-up runs on one instance of the fleet, right after the
 * first tick that runs once the job can run again, recorded in the history as {@link RunKind#CATCH_UP}.
 */
public enum MissedTicks {
    /** They are not run: the job runs from its next tick on (as a scheduler on one machine does). */
    SKIP,
    /**
     * One run for all of them (those within the {@code catch-up-window} before the last one), given the latest missed
     * tick as its scheduled fire time.
     */
    RUN_ONCE,
    /**
     * One run for each of them, oldest first, each given its own tick as its scheduled fire time: the latest
     * {@code max-catch-up-runs} of those within the {@code catch-up-window} before the last one.
     */
    RUN_ALL
}
