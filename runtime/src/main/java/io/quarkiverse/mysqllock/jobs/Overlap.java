package io.quarkiverse.mysqllock.jobs;

/**
 * What a tick of a scheduled job does when it fires while a run of the job still lasts, on any instance of the fleet
 * ({@code quarkus.mysql-lock.jobs."<job>".overlap}). Either way the tick is in the history: never lost silently.
 */
public enum Overlap {
    /** It does not run: recorded as {@link RunOutcome#SKIPPED_BUSY}. */
    SKIP,
    /**
     * It is recorded as {@link RunOutcome#QUEUED}, and one more run ({@link RunKind#QUEUED}, given the latest queued tick)
     * follows once the run that lasted has ended, on one instance of the fleet: however many ticks were queued
     * meanwhile, one run.
     */
    QUEUE_ONE
}
