package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.List;
import java.util.function.BiConsumer;

import io.quarkiverse.mysqllock.jobs.JobAction;
import io.quarkiverse.mysqllock.jobs.JobChange;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;
import io.quarkiverse.mysqllock.runtime.table.JobStateChange;

/**
 * Where a manager keeps its jobs: the database's tables ({@link DatabaseJobs}), or the in-memory engine's memory
 * ({@link MemoryJobStore}). Each method throws {@link IllegalStateException} when it could not do its work.
 */
interface JobStore {

    /** Claims one tick of a job ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#claim}). */
    JobClaim claim(String name, String serverName, String tickRow, long tick, long missedBefore,
            java.time.Instant nextFire);

    /**
     * Claims a tick this instance claimed, with the job's lock held, where versions before the jobs table claim it (the
     * tick row): false if such an instance ran it.
     */
    boolean claimOlderRow(String name, String tickRow, long tick);

    /**
     * Gives back the claim of a tick this instance could not run
     * ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#unclaim}).
     */
    void unclaim(String name, String serverName, long tick, JobClaim claim);

    /**
     * A job's missed ticks to catch up while it is active
     * ({@link io.quarkiverse.mysqllock.runtime.table.CatchUpRanges#read}):
     * {@code {after, upTo, nextAfter, nextUpTo}}: the pending range (the ticks after the first up to the second), and
     * the next one, apart from it (0, 0: none); null for none at all.
     */
    long[] catchUpRange(String name, String serverName);

    /**
     * Takes a job's missed ticks as {@link #catchUpRange} read them, unless they changed since: {@code left}, in the
     * same form, is what is left for later. Whether this call took them.
     */
    boolean takeCatchUp(String name, String serverName, long[] range, long[] left);

    /**
     * Queues one run of a job: {@code tick} fired while a run lasted
     * ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#queue}).
     */
    void queue(String name, String serverName, long tick);

    /** The tick of a job's queued run while the job is active; 0 for none. */
    long queued(String name, String serverName);

    /** Takes a job's queued run, as {@link #queued} read it, unless it changed since: whether this call took it. */
    boolean takeQueued(String name, String serverName, long tick);

    /**
     * Records a run of another instance (the test kit's), started and ended at once with {@code outcome}, as a run's
     * end is: the job's row keeps it as its last run.
     */
    void ranAs(String name, String serverName, long tick, RunOutcome outcome, String instance);

    /** Records a run as it starts: its id. */
    long started(String name, String serverName, long tick, RunKind kind);

    /** Records a tick that did not run, claimed by this instance ({@code error}: why, or null). */
    void skipped(String name, String serverName, long tick, RunKind kind, RunOutcome outcome, Throwable error);

    /** Records the end of the run {@code id} ({@link #started}). */
    void ended(String name, String serverName, long id, RunOutcome outcome, Throwable error);

    /**
     * Removes the job's rows the retention does not keep, at most every {@link HistoryRetention#PERIOD_NANOS} per job (a
     * call between does nothing): after a run's end or a skip, off the thread that ran the job.
     */
    void trim(String name, String serverName);

    /** How much of each job's history to keep from now on. */
    void retain(HistoryRetention retention);

    /** Every job's row, or the one of {@code serverName} (when not null), each with its key. */
    void read(String serverName, BiConsumer<String, JobInfo> jobs);

    /** A job's history, the latest first. */
    List<JobRun> history(String name, String serverName, int limit);

    /**
     * Changes a job's state for the whole fleet ({@link JobStateChange#of}), and records the change in the audit trail
     * in the same transaction: the change made, or refused; null where the job has no row.
     */
    JobStateChange change(String name, String serverName, JobAction action, String by, String why);

    /** The changes made to a job, the latest first. */
    List<JobChange> changes(String name, String serverName, int limit);

    /** Records in the audit trail that a job is run now, with the state it is in (none where it has no row yet). */
    void ranNow(String name, String serverName, String by, String why);

    /**
     * Every job's silence ({@link JobSilences.Silence}), with its key: how long since its last success, on the store's
     * clock.
     *
     * @param readNanos when this read is ({@link System#nanoTime()})
     */
    void silences(BiConsumer<String, JobSilences.Silence> found, long readNanos);

    /** Makes sure a job of this application has its row, as its first tick does (its tick row read where one is). */
    void seed(String name, String serverName, String tickRow);

    /** Records a change made to a lock from outside (a forced release) in the audit trail. */
    void audit(String action, String serverName, String target, String by, String why, String detail);
}
