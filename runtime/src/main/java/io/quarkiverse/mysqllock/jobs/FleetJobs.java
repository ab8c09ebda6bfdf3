package io.quarkiverse.mysqllock.jobs;

import java.util.List;
import java.util.Optional;

/**
 * The scheduled jobs of a datasource's fleet ({@code @Scheduled} {@code @Locked} methods with a
 * {@code ScheduledExecution} parameter), read from its jobs tables: what every instance ran, not only this one. From
 * {@code LockManager.jobs()}. Each call reads the database (a blocking call: not on an event loop); a table not created
 * yet reads as empty.
 */
public interface FleetJobs {

    /** Every job of the fleet (of this instance's namespace), by name. */
    List<JobInfo> jobs();

    /** The job of this name; empty if it never claimed a tick. */
    Optional<JobInfo> job(String name);

    /**
     * A job's history, the latest first: its runs and the ticks it skipped.
     *
     * @param limit at most this many rows (at least 1)
     */
    List<JobRun> history(String name, int limit);
}
