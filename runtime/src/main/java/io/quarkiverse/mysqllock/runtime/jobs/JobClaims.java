package io.quarkiverse.mysqllock.runtime.jobs;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.jobs.FleetJobs;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;

/**
 * The ticks of scheduled jobs (exclusive {@code @Locked} methods with a {@code ScheduledExecution} parameter): each
 * tick (the trigger's scheduled fire time, not the time it fired) runs on one instance, whatever the instances' clocks.
 * The first instance to fire a tick claims it in the jobs table
 * ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#claim}, one statement, which is all the others send), then takes
 * the job's lock for its run: the lock keeps runs from overlapping, the claim keeps a tick from running twice.
 */
public final class JobClaims {

    /**
     * How long a tick waits for its lock at least, whatever its {@code waitFor}: Quarkus checks triggers once a second,
     * so an instance can fire a tick up to a second late, and its run of tick N then holds the lock when another claims
     * tick N + 1. Skipping N + 1 at once would leave a tick nobody ran; it waits for the older run to end instead (and
     * is skipped, or fails, as before when the lock stays busy: a run of a tick that still lasts).
     */
    public static final Duration LATE_TRIGGER_GRACE = Duration.ofSeconds(1);

    /**
     * The lock table row where versions before the jobs table kept a job's ticks is named after its lock, with this
     * prefix: no lock may have a name that begins with it ({@code LockNames.requireValid}).
     */
    public static final String ROW_PREFIX = "tick@";

    private static final Logger LOG = Logger.getLogger(JobClaims.class);

    private final DatabaseJobs database;
    private final Supplier<LockEngine> engine;
    private final Executor worker;
    private volatile JobStore memory;
    private volatile HistoryRetention retention = HistoryRetention.DEFAULT;
    private final Predicate<String> ours;
    private final JobSilences silences;
    private volatile LockMetrics metrics = LockMetrics.NONE;
    /** The jobs this instance fired, each with its gauge. */
    private final Set<String> measured = ConcurrentHashMap.newKeySet();
    private final CatchUps catchUps = new CatchUps();
    private final QueuedRuns queues;

    /**
     * @param database the jobs tables, null for the in-memory engine (then {@code engine} is it)
     * @param worker where a run's end is recorded when it ends on an event loop
     * @param ours whether a row's key is of this manager's namespace
     */
    public JobClaims(DatabaseJobs database, Supplier<LockEngine> engine, Executor worker, Predicate<String> ours) {
        this.database = database;
        this.engine = engine;
        this.worker = worker;
        this.ours = ours;
        this.silences = new JobSilences(() -> store("(jobs)"), ours, worker);
        this.queues = new QueuedRuns(catchUps, worker, engine);
    }

    /** Where the runs of jobs, and their silences, are measured. */
    public void measure(LockMetrics metrics) {
        this.metrics = metrics;
    }

    /** Where a job's catch-up is run: its {@code @Locked} method, by the job's name, with the catch-up's tick. */
    public void launchCatchUpsWith(java.util.function.BiConsumer<String, JobTick> launcher) {
        catchUps.launchWith(launcher);
    }

    /** How long each job has gone without a success anywhere in the fleet. */
    public JobSilences silences() {
        return silences;
    }

    /**
     * The lock of a run, which records the run's end ({@link JobRunHandle}): nothing (null) when another instance claimed
     * this tick (or it is settled), or this instance claimed it for a paused or disabled job, or the lock stays busy.
     * The claim comes first; a claimer that cannot have the lock gives the claim back, so that a later fire of the tick
     * (another instance's, a retry) may run it. With the lock held, the claimer claims the tick where versions before the
     * jobs table claim it too. The history records the run as it starts, and the ticks this instance skips.
     *
     * @param name the job's lock name, as the application wrote it
     * @param serverName the job's lock name on the server: its row in the jobs table
     * @param tickRow the lock table row where versions before the jobs table claim the job's ticks
     * @param tick the scheduled fire time of this run, claimed first; or a run-now's, which claims nothing
     * @throws io.quarkiverse.mysqllock.LockNotAcquiredException when the lock could not be had and the method's
     *         {@code onBusy} is {@code FAIL}
     */
    public ControlledHandle acquire(String name, String serverName, String tickRow, JobTick tick,
            Supplier<ControlledHandle> lock) {
        JobStore store = store(name);
        tick.take(); // from here on, every way out tells it
        if (queues.stopping()) {
            tick.told(null); // shutting down: the tick is left to the fleet
            return null;
        }
        if (measured.add(name)) {
            metrics.jobSilence(name, () -> silences.cached(name));
        }
        JobClaim claim = tick.claims()
                ? store.claim(name, serverName, tickRow, tick.tick(), CatchUps.missedBefore(tick), tick.nextFire())
                : null;
        if (tick.elsewhere() != null) {
            ranElsewhere(store, name, serverName, tickRow, tick, claim);
            return null;
        }
        if (claim != null && claim.replacedPending()) {
            LOG.warnf("Job '%s' missed ticks a third time (or was paused) before the catch-ups of its two earlier ranges"
                    + " of missed ticks ended, with ticks run between them: the newest ones replace the second range,"
                    + " whose ticks are not caught up", name);
        }
        if (claim != null && claim.kind() == JobClaim.Kind.PAUSED) {
            skipped(store, name, serverName, tick, RunOutcome.SKIPPED_PAUSED, null);
        }
        if (claim != null && claim.kind() != JobClaim.Kind.RUN) {
            if (claim.kind() != JobClaim.Kind.PAUSED) {
                tick.told(null); // not this instance's to run
            }
            return null;
        }
        ControlledHandle handle;
        try {
            handle = lock.get();
        } catch (LockNotAcquiredException e) {
            boolean busy = e.reason() == LockNotAcquiredException.Reason.BUSY;
            if (busy && queued(store, name, serverName, tick, claim)) {
                return null; // not a failure: it runs later
            }
            givenBack(store, name, serverName, tick, claim, busy ? RunOutcome.SKIPPED_BUSY : RunOutcome.NOT_ACQUIRED, e);
            throw e;
        } catch (RuntimeException | Error e) {
            givenBack(store, name, serverName, tick, claim, RunOutcome.NOT_ACQUIRED, e);
            throw e;
        }
        if (handle == null) {
            if (!queued(store, name, serverName, tick, claim)) {
                givenBack(store, name, serverName, tick, claim, RunOutcome.SKIPPED_BUSY, null);
            }
            return null;
        }
        if (tick.kind() == RunKind.CATCH_UP) {
            CatchUps.Taken taken = taken(name, tick, handle, () -> CatchUps.take(store, name, serverName,
                    tick.catchUp()));
            if (taken == null) {
                return null;
            }
            tick.caughtUp(taken.tick());
            if (taken.more()) {
                catchUps.after(tick, name); // the next catch-up runs once this one ended
            }
        }
        if (tick.kind() == RunKind.QUEUED) {
            Long queued = taken(name, tick, handle, () -> QueuedRuns.take(store, name, serverName));
            if (queued == null) {
                return null;
            }
            tick.caughtUp(queued);
        }
        if (claim != null || tick.kind() == RunKind.QUEUED) {
            // a queued tick too: during a rolling upgrade, an instance of a version before the jobs table may have run it
            try {
                if (!store.claimOlderRow(name, tickRow, tick.tick())) {
                    handle.release(); // an instance of a version before the jobs table ran it
                    tick.told(null);
                    return null;
                }
            } catch (RuntimeException e) {
                handle.release();
                givenBack(store, name, serverName, tick, claim, RunOutcome.NOT_ACQUIRED, e);
                throw e;
            }
        }
        if (claim != null && claim.catchUpPending()) {
            catchUps.after(tick, name); // this run is the first that runs for the job: the missed ticks come after it
        }
        if (tick.queuesOne()) {
            queues.after(store, name, serverName, tick); // a tick that fires while it runs is queued
        }
        long id;
        try {
            id = store.started(name, serverName, tick.tick(), tick.kind());
        } catch (RuntimeException e) {
            LOG.warnf("A run of job '%s' is not in its history: %s", name, e.getMessage());
            id = JobRunHandle.NOT_RECORDED;
        }
        return new JobRunHandle(handle, store, name, serverName, id, tick, worker, metrics);
    }

    /**
     * A tick another instance fired (the test kit's): claimed, and recorded as that instance's run or skip, in no time
     * and without the job's lock. A catch-up it finds runs here after it, as it would there.
     */
    private void ranElsewhere(JobStore store, String name, String serverName, String tickRow, JobTick tick,
            JobClaim claim) {
        RunOutcome outcome = switch (claim.kind()) {
            case RUN -> RunOutcome.SUCCEEDED;
            case PAUSED -> RunOutcome.SKIPPED_PAUSED;
            default -> null; // claimed before, or disabled
        };
        try {
            if (outcome == RunOutcome.SUCCEEDED && !store.claimOlderRow(name, tickRow, tick.tick())) {
                outcome = null; // an instance of a version before the jobs table ran it
            }
            if (outcome == RunOutcome.SUCCEEDED && claim.catchUpPending()) {
                catchUps.after(tick, name);
            }
            if (outcome != null) {
                store.ranAs(name, serverName, tick.tick(), outcome, tick.elsewhere());
            }
        } catch (RuntimeException e) {
            tick.outcome().completeExceptionally(e);
            throw e;
        }
        tick.told(outcome);
    }

    /**
     * A claimed tick that found the job's lock busy, of a job that queues one run: queued and recorded, and watched
     * until a run takes it ({@link QueuedRuns}). A queue that could not be written is recorded as a busy skip, the claim
     * kept. False when the job does not queue.
     */
    private boolean queued(JobStore store, String name, String serverName, JobTick tick, JobClaim claim) {
        if (!tick.queuesOne() || claim == null) {
            return false;
        }
        RuntimeException failed = queues.queue(store, name, serverName, tick);
        skipped(store, name, serverName, tick, failed == null ? RunOutcome.QUEUED : RunOutcome.SKIPPED_BUSY, failed);
        queues.watch(store, name, serverName, tick);
        return true;
    }

    /**
     * The application shuts down: no run of a job starts here any more (a tick is left to the fleet), so that the wait
     * for work in progress ends ({@code shutdown-wait}).
     */
    public void stop() {
        queues.stop();
    }

    /**
     * A tick this instance does not run: the claim given back (where it claimed one), and the skip recorded and told.
     */
    private void givenBack(JobStore store, String name, String serverName, JobTick tick, JobClaim claim,
            RunOutcome outcome, Throwable error) {
        if (tick.kind() == RunKind.CATCH_UP || tick.kind() == RunKind.QUEUED) {
            // a catch-up's missed ticks stay, for after the next run of the job that runs; a queued run is run by the
            // run that holds the lock, once it ended
            LOG.debugf("A %s run of job '%s' did not run (%s): %s", tick.kind(), name, outcome, error);
            tick.told(outcome);
            return;
        }
        Uninterrupted.run(() -> {
            if (claim != null) {
                try {
                    store.unclaim(name, serverName, tick.tick(), claim);
                } catch (RuntimeException e) {
                    LOG.warnf("Tick %s of job '%s' is lost: %s", java.time.Instant.ofEpochMilli(tick.tick()), name,
                            e.getMessage());
                }
            }
            skipped(store, name, serverName, tick, outcome, error);
        });
    }

    /**
     * With the job's lock held, the tick a catch-up or a queued run runs for, as {@code take} takes it
     * ({@link CatchUps#take}, {@link QueuedRuns#take}): null, the lock released and the run told, when it has none. A
     * take that fails releases the lock too, and is told as not acquired: the ticks stay for a later run.
     */
    private <T> T taken(String name, JobTick tick, ControlledHandle handle, Supplier<T> take) {
        T taken;
        try {
            taken = take.get();
        } catch (RuntimeException e) {
            handle.release();
            LOG.debugf("A %s run of job '%s' could not take its tick: %s", tick.kind(), name, e);
            tick.told(RunOutcome.NOT_ACQUIRED);
            throw e;
        }
        if (taken == null) {
            handle.release();
            tick.told(null);
        }
        return taken;
    }

    /** Records a change made to a lock from outside (a forced release) in the audit trail. */
    public void audit(String action, String serverName, String target, String by, String why, String detail) {
        store(target).audit(action, serverName, target, by, why, detail);
    }

    /** How much of each job's history to keep ({@code quarkus.mysql-lock.job-history.*}). */
    public void retain(HistoryRetention retention) {
        this.retention = retention;
        if (database != null) {
            database.retain(retention);
        }
        JobStore inMemory = memory;
        if (inMemory != null) {
            inMemory.retain(retention);
        }
    }

    /**
     * The fleet's jobs, as {@link FleetJobs} reads them.
     *
     * @param serverNames a job's name as the server knows it, checked as a lock name is
     * @param tickRows a job's tick row, where versions before the jobs table claimed its ticks
     * @param checkBlockingAllowed throws on an event loop
     * @param dataSource the manager's datasource, whose jobs it runs now
     * @param launcher what runs a job of this application now
     */
    public FleetJobs view(Function<String, String> serverNames, Function<String, String> tickRows,
            Runnable checkBlockingAllowed, String dataSource, Supplier<JobLauncher> launcher) {
        return new FleetJobsView(() -> store("(jobs)"), serverNames, ours, checkBlockingAllowed,
                new FleetJobsView.Launches(dataSource, launcher, tickRows));
    }

    private void skipped(JobStore store, String name, String serverName, JobTick tick, RunOutcome outcome,
            Throwable error) {
        metrics.jobRun(name, outcome, 0);
        try {
            store.skipped(name, serverName, tick.tick(), tick.kind(), outcome, error);
        } catch (RuntimeException e) {
            LOG.warnf("A skipped tick of job '%s' (%s) is not in its history: %s", name, outcome, e.getMessage());
        } finally {
            tick.told(outcome);
        }
        Trimming.later(store, name, serverName, worker);
    }

    private JobStore store(String name) {
        if (database != null) {
            return database;
        }
        if (memory == null && engine.get() instanceof InMemoryEngine inMemory) {
            JobStore store = new MemoryJobStore(inMemory);
            store.retain(retention);
            memory = store;
        }
        if (memory == null) {
            throw new IllegalStateException("No jobs table for '" + name + "'");
        }
        return memory;
    }
}
