package io.quarkiverse.mysqllock.jobs;

/** How a run of a scheduled job ended, or why a tick did not run: one row of the job's history each. */
public enum RunOutcome {
    /** Started and not ended yet; a run whose instance died before its end stays so. */
    RUNNING,
    /** It returned, its lock held throughout. */
    SUCCEEDED,
    /** It threw, its lock held throughout: the history keeps the error's class and first line. */
    FAILED,
    /** Its lock was lost while it ran (whether it returned or threw): another instance may have run meanwhile. */
    LOST,
    /** Its {@code Uni} or {@code suspend} call was cancelled: its lock ended then, and what it left running ran without. */
    CANCELLED,
    /**
     * The tick was claimed, but the job's lock stayed busy past its wait: a run of an earlier tick still lasted. The
     * claim was given back, so that a later fire of the tick (another instance's, a retry) may still run it.
     */
    SKIPPED_BUSY,
    /**
     * The tick was claimed, but its lock could not be had for another reason (the error's class and first line say
     * which); the claim was given back, as for {@link #SKIPPED_BUSY}.
     */
    NOT_ACQUIRED,
    /** The tick was claimed while the job was paused. */
    SKIPPED_PAUSED,
    /**
     * The tick was claimed while a run of the job still lasted, and the job queues one ({@code overlap=queue-one}): a
     * run of kind {@link RunKind#QUEUED} follows once the run that lasted has ended.
     */
    QUEUED;

    /** Whether a run with this outcome is over (every outcome but {@link #RUNNING}). */
    public boolean ended() {
        return this != RUNNING;
    }
}
