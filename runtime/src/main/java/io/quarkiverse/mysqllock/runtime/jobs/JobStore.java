package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.List;
import java.util.function.BiConsumer;

import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;

/**
 * Where a manager keeps its jobs: the database's tables ({@link DatabaseJobs}), or the in-memory engine's memory
 * ({@link MemoryJobStore}). Each method throws {@link IllegalStateException} when it could not do its work.
 */
interface JobStore {

    /** Claims one tick of a job ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#claim}). */
    JobClaim claim(String name, String serverName, String tickRow, long tick);

    /**
     * Claims a tick this instance claimed, with the job's lock held, where versions before the jobs table claim it (the
     * tick row): false if such an instance ran it.
     */
    boolean claimOlderRow(String name, String tickRow, long tick);

    /**
     * Gives back the claim of a tick this instance could not run
     * ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#unclaim}).
     */
    void unclaim(String name, String serverName, long tick, long previousLatest);

    /** Records a run as it starts: its id. */
    long started(String name, String serverName, long tick, RunKind kind);

    /** Records a tick that did not run, claimed by this instance ({@code error}: why, or null). */
    void skipped(String name, String serverName, long tick, RunKind kind, RunOutcome outcome, Throwable error);

    /** Records the end of the run {@code id} ({@link #started}). */
    void ended(String name, long id, RunOutcome outcome, Throwable error);

    /** Every job's row, or the one of {@code serverName} (when not null), each with its key. */
    void read(String serverName, BiConsumer<String, JobInfo> jobs);

    /** A job's history, the latest first. */
    List<JobRun> history(String name, String serverName, int limit);
}
