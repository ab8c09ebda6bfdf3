package io.quarkiverse.mysqllock.jobs;

/** A change made to a scheduled job for the whole fleet ({@link FleetJobs}), as its audit trail names it. */
public enum JobAction {
    /** {@link FleetJobs#pause}: an active job's ticks are skipped, each recorded, until it is resumed. */
    PAUSE,
    /** {@link FleetJobs#resume}: a paused job's ticks run again. */
    RESUME,
    /** {@link FleetJobs#disable}: the job's ticks are skipped, unrecorded, until it is enabled. */
    DISABLE,
    /** {@link FleetJobs#enable}: a disabled job's ticks run again. */
    ENABLE,
    /** {@link FleetJobs#runNow}: the job was asked to run once outside its schedule; its state is unchanged. */
    RUN_NOW
}
