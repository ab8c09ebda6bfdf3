package io.quarkiverse.mysqllock.jobs;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

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

    /**
     * Pauses a job for the whole fleet: from its next tick, every instance skips it, each tick recorded in its history as
     * {@link RunOutcome#SKIPPED_PAUSED}, until {@link #resume}. A run that lasts goes on. Each change is in the audit
     * trail ({@link #changes}), with who asked and why.
     *
     * @param name the job's name (its lock's name)
     * @param by who asks: a user's or a service's name, at most 255 characters
     * @param why why, at most 1,000 characters; may be null
     * @return the job as it is after the change
     * @throws IllegalArgumentException if the fleet has no such job (a job gets its row at its first tick), or
     *         {@code by} is blank or too long, or {@code why} too long
     * @throws IllegalStateException if the job is disabled (enable it first), or the database could not make the change
     */
    JobInfo pause(String name, String by, String why);

    /**
     * Ends a job's pause for the whole fleet: its next tick runs. A job that is not paused is left as it is (and the
     * request recorded).
     *
     * @throws IllegalStateException if the job is disabled: {@link #enable} ends that
     * @see #pause
     */
    JobInfo resume(String name, String by, String why);

    /**
     * Disables a job for the whole fleet: from its next tick, every instance skips it, unrecorded, until {@link #enable}.
     *
     * @see #pause
     */
    JobInfo disable(String name, String by, String why);

    /**
     * Enables a disabled job for the whole fleet: its next tick runs.
     *
     * @throws IllegalStateException if the job is paused: {@link #resume} ends that
     * @see #pause
     */
    JobInfo enable(String name, String by, String why);

    /**
     * Runs a job once, now, outside its schedule, on this instance: its {@code @Locked} method is called on a worker
     * thread, with its lock (waiting for it as a tick does), whatever the job's state. The run is in the job's history as
     * {@link RunKind#RUN_NOW}, and the request in its audit trail. Only a job of this application (of this manager's
     * datasource) whose method takes nothing but its {@code ScheduledExecution} can be run so; the
     * {@code ScheduledExecution} it is given has the time of the request as its scheduled fire time.
     *
     * @param by who asks, as for {@link #pause}
     * @return completed with how the run ended ({@link RunOutcome#SKIPPED_BUSY} when its lock stayed busy: a run of it
     *         lasts on another instance)
     * @throws IllegalArgumentException if this application has no such job, or it cannot be run so
     */
    CompletionStage<RunOutcome> runNow(String name, String by, String why);

    /**
     * The changes made to a job ({@link #pause}, {@link #resume}, {@link #disable}, {@link #enable}, {@link #runNow}),
     * the latest first.
     *
     * @param limit at most this many (at least 1)
     */
    List<JobChange> changes(String name, int limit);
}
