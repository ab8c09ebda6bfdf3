package io.quarkiverse.mysqllock.runtime.memory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import io.quarkiverse.mysqllock.jobs.JobAction;
import io.quarkiverse.mysqllock.jobs.JobChange;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;
import io.quarkiverse.mysqllock.runtime.table.JobStateChange;
import io.quarkiverse.mysqllock.runtime.table.JobTable;
import io.quarkiverse.mysqllock.runtime.table.RunTable;
import io.quarkiverse.mysqllock.runtime.table.TickRows;

/**
 * The in-memory engine's jobs tables: each job's ticks and state, claimed by the rule of the jobs table, and its run
 * history
 * ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#claim}). One per datasource name, shared by every in-memory
 * manager of the JVM, as the engine's locks are.
 */
public final class MemoryJobs {

    private static final Map<String, MemoryJobs> SERVERS = new ConcurrentHashMap<>();

    private final Map<String, Row> rows = new ConcurrentHashMap<>();
    /** Every run and skipped tick, by id (in the order they started). */
    private final ConcurrentSkipListMap<Long, Run> runs = new ConcurrentSkipListMap<>();
    private final AtomicLong ids = new AtomicLong();
    /** The changes made to jobs, the latest last, each with its job's key. */
    private final List<Change> changes = new CopyOnWriteArrayList<>();

    private MemoryJobs() {
    }

    static MemoryJobs of(String dataSourceName) {
        return SERVERS.computeIfAbsent(dataSourceName, ignored -> new MemoryJobs());
    }

    /** A job's row, guarded by its own monitor. */
    private static final class Row {
        final String job;
        final Instant created = Instant.now();
        /** When its state last changed; null if never. */
        Instant changed;
        /** The trigger's next fire time, as the latest claimer saw it; null if unknown. */
        Instant nextFire;
        int stateCode = 1;

        /** Its state, as a row of the jobs table names it (codes as the claim reports them). */
        JobState state() {
            return JobState.values()[Math.min(stateCode, 3) - 1];
        }

        long latest;
        long settled;
        /** The latest tick claimed, run or given back. */
        long fired;
        /** The missed ticks to catch up: those after the first up to the second (0: none). */
        long catchUpFrom;
        long catchUpTo;
        /** The next range of missed ticks, apart from the pending one (ticks ran between them): the same (0: none). */
        long nextCatchUpFrom;
        long nextCatchUpTo;
        /** The latest tick that fired while a run lasted, of a job that queues one run (0: none). */
        long queued;

        /** Whether its queued tick is due, as the jobs table judges it: no newer claim since, and the job active. */
        boolean queuedDue() {
            return queued >= latest && state() == JobState.ACTIVE;
        }

        Row(String job) {
            this.job = job;
        }
    }

    /** Makes sure a job has its row. */
    public void seed(String serverName, String job) {
        rows.computeIfAbsent(serverName, ignored -> new Row(job));
    }

    /** Claims one tick of a job ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#claim}). */
    public JobClaim claim(String serverName, String job, long tick, long missedBefore, Instant nextFire) {
        Row row = rows.computeIfAbsent(serverName, ignored -> new Row(job));
        synchronized (row) {
            if (!TickRows.claimable(tick, row.latest, row.settled)) {
                return JobClaim.TAKEN;
            }
            if (nextFire != null) {
                row.nextFire = nextFire;
            }
            long previous = row.latest;
            JobState state = row.state();
            boolean gap = state != JobState.DISABLED && JobClaim.isGap(tick, previous, row.fired, missedBefore);
            boolean paused = missedBefore > 0 && tick > previous && state == JobState.PAUSED;
            boolean pending = state == JobState.ACTIVE && missedBefore > 0
                    && (row.catchUpTo > 0 || row.nextCatchUpTo > 0 || gap);
            // as the jobs table: a range apart from the pending one (ticks ran after it) is the next range
            boolean apart = (gap || paused) && row.catchUpTo > 0 && row.catchUpTo < previous;
            boolean replaced = apart && row.nextCatchUpTo > 0 && row.nextCatchUpTo < previous;
            long from = gap ? Math.max(previous, row.fired) : previous;
            if (apart) {
                if (row.nextCatchUpTo == 0 || replaced) {
                    row.nextCatchUpFrom = from;
                }
                row.nextCatchUpTo = paused ? tick : tick - 1;
            } else if (gap || paused) {
                if (row.catchUpTo == 0) {
                    row.catchUpFrom = from;
                }
                row.catchUpTo = paused ? tick : tick - 1;
            }
            row.fired = Math.max(row.fired, tick);
            if (tick > row.latest) {
                row.settled = gap || paused ? tick - 1 : row.latest;
                row.latest = tick;
            } else {
                row.settled = tick;
            }
            return JobClaim.claimed(row.stateCode, previous, gap, pending, replaced);
        }
    }

    /**
     * Records a run as it starts, or a tick skipped (ended as it starts): its id.
     *
     * @param job the job's name as the application wrote it
     */
    public long record(String serverName, String job, long tick, RunKind kind, RunOutcome outcome, String instance,
            Throwable error) {
        long id = ids.incrementAndGet();
        Instant now = Instant.now();
        runs.put(id, new Run(serverName, !outcome.ended(), new JobRun(job, Instant.ofEpochMilli(tick), kind, outcome,
                instance, now, outcome.ended() ? now : null, RunTable.errorClass(error), RunTable.errorMessage(error))));
        return id;
    }

    /** Gives back the claim of a tick ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#unclaim}). */
    public void unclaim(String serverName, long tick, JobClaim claim) {
        Row row = rows.get(serverName);
        if (row == null) {
            return;
        }
        synchronized (row) {
            long previousLatest = claim.previousLatest();
            boolean above = tick > previousLatest;
            long settledByClaim = claim.gap() ? tick - 1 : previousLatest;
            if (row.latest == (above ? tick : previousLatest) && row.settled == (above ? settledByClaim : tick)) {
                row.latest = above ? settledByClaim : previousLatest;
                row.settled = above ? settledByClaim : tick - 1;
            }
        }
    }

    /** A job's missed ticks to catch up ({@link io.quarkiverse.mysqllock.runtime.table.CatchUpRanges#read}). */
    public long[] catchUpRange(String serverName) {
        Row row = rows.get(serverName);
        if (row == null) {
            return null;
        }
        synchronized (row) {
            return (row.catchUpTo > 0 || row.nextCatchUpTo > 0) && row.state() == JobState.ACTIVE
                    ? new long[] { row.catchUpFrom, row.catchUpTo, row.nextCatchUpFrom, row.nextCatchUpTo }
                    : null;
        }
    }

    /** The last of a job's missed ticks kept to catch up, whatever its state; 0 for none. */
    public long catchUpTo(String serverName) {
        return read(serverName, row -> Math.max(row.catchUpTo, row.nextCatchUpTo));
    }

    /** A job's settled mark ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#claim}); 0 for none. */
    public long settled(String serverName) {
        return read(serverName, row -> row.settled);
    }

    private long read(String serverName, java.util.function.ToLongFunction<Row> column) {
        Row row = rows.get(serverName);
        if (row == null) {
            return 0;
        }
        synchronized (row) {
            return column.applyAsLong(row);
        }
    }

    /** Takes a job's missed ticks ({@link io.quarkiverse.mysqllock.runtime.table.CatchUpRanges#take}). */
    public boolean takeCatchUp(String serverName, long[] range, long[] left) {
        Row row = rows.get(serverName);
        if (row == null) {
            return false;
        }
        synchronized (row) {
            if (row.catchUpFrom != range[0] || row.catchUpTo != range[1] || row.nextCatchUpFrom != range[2]
                    || row.nextCatchUpTo != range[3] || row.state() != JobState.ACTIVE) {
                return false;
            }
            row.catchUpFrom = left[0];
            row.catchUpTo = left[1];
            row.nextCatchUpFrom = left[2];
            row.nextCatchUpTo = left[3];
            return true;
        }
    }

    /** Queues one run of a job ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#queue}). */
    public void queue(String serverName, long tick) {
        Row row = rows.get(serverName);
        if (row != null) {
            synchronized (row) {
                row.queued = Math.max(row.queued, tick);
            }
        }
    }

    /** The tick of a job's queued run while it is active ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#queued}). */
    public long queued(String serverName) {
        return read(serverName, row -> row.queuedDue() ? row.queued : 0);
    }

    /** Takes a job's queued run ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#takeQueued}). */
    public boolean takeQueued(String serverName, long tick) {
        Row row = rows.get(serverName);
        if (row == null) {
            return false;
        }
        synchronized (row) {
            if (row.queued != tick || !row.queuedDue()) {
                return false;
            }
            row.queued = 0;
            return true;
        }
    }

    /** Records the end of the run {@code id}. */
    public void ended(long id, RunOutcome outcome, Throwable error) {
        runs.computeIfPresent(id, (key, run) -> new Run(run.serverName(), run.ran(), new JobRun(run.run().job(),
                run.run().tick(), run.run().kind(), outcome, run.run().instance(), run.run().startedAt(), Instant.now(),
                RunTable.errorClass(error), RunTable.errorMessage(error))));
    }

    /** Removes a job's rows as the history table's purge does ({@link RunTable#purge}). */
    public void trim(String serverName, int keepRuns, Duration keepFor) {
        Instant oldest = Instant.now().minus(keepFor);
        Instant oldestRunning = oldest.minus(Duration.ofDays(1));
        int runsKept = 0;
        int skipsKept = 0;
        for (Map.Entry<Long, Run> entry : runs.descendingMap().entrySet()) {
            if (!entry.getValue().serverName().equals(serverName)) {
                continue;
            }
            JobRun run = entry.getValue().run();
            boolean ended = run.outcome().ended();
            boolean beyond = RunTable.skipped(run.outcome()) ? ++skipsKept > keepRuns : ++runsKept > keepRuns;
            if (ended && beyond || run.startedAt().isBefore(ended ? oldest : oldestRunning)) {
                runs.remove(entry.getKey(), entry.getValue());
            }
        }
    }

    /**
     * Every job's row, or the one of {@code serverName} (when not null), with its key: what its history says of its
     * last run, success and failure.
     */
    public void read(String serverName, BiConsumer<String, JobInfo> found) {
        new TreeMap<>(rows).forEach((key, row) -> {
            if (serverName != null && !serverName.equals(key)) {
                return;
            }
            List<Run> history = runs.descendingMap().values().stream().filter(run -> run.serverName().equals(key))
                    .toList();
            // as the jobs table keeps it: the run that started last of those that ended (not a tick skipped)
            JobRun last = history.stream().filter(run -> run.ran() && run.run().outcome().ended()).map(Run::run)
                    .findFirst().orElse(null);
            long latest;
            JobState state;
            Instant nextFire;
            synchronized (row) {
                latest = row.latest;
                state = row.state();
                nextFire = row.nextFire;
            }
            found.accept(key, new JobInfo(row.job, state,
                    latest == 0 ? null : Instant.ofEpochMilli(latest), nextFire, last == null ? null : last.outcome(),
                    last == null ? null : last.startedAt(), last == null ? null : last.endedAt(),
                    endOfLast(history, RunOutcome.SUCCEEDED), endOfLast(history, RunOutcome.FAILED, RunOutcome.LOST)));
        });
    }

    /** When a run with one of these outcomes last ended (a success of a run-now does not count, as in the table). */
    private static Instant endOfLast(List<Run> history, RunOutcome... outcomes) {
        return history.stream().map(Run::run).filter(run -> run.endedAt() != null
                && List.of(outcomes).contains(run.outcome())
                && !(run.outcome() == RunOutcome.SUCCEEDED && run.kind() == RunKind.RUN_NOW)).map(JobRun::endedAt)
                .max(Instant::compareTo).orElse(null);
    }

    /**
     * Changes a job's state ({@link JobStateChange#of}) and records the change: the change made, or refused; null where
     * the job has no row.
     */
    public JobStateChange change(String serverName, String job, JobAction action, String by, String why,
            String instance) {
        Row row = rows.get(serverName);
        if (row == null) {
            return null;
        }
        synchronized (row) {
            JobStateChange change = JobStateChange.of(action, job, row.state());
            if (change.to() != null) {
                if (change.to() != change.from()) {
                    if (change.from() == JobState.DISABLED) {
                        row.fired = Math.max(row.fired, System.currentTimeMillis()); // as the jobs table: no gap
                    }
                    row.stateCode = change.to().ordinal() + 1;
                    row.changed = Instant.now();
                }
                if (change.to() == JobState.DISABLED) {
                    row.catchUpFrom = 0; // not caught up, as the database's jobs table does
                    row.catchUpTo = 0;
                    row.nextCatchUpFrom = 0;
                    row.nextCatchUpTo = 0;
                }
                changes.add(new Change(serverName, new JobChange(job, action, change.from(), change.to(), by, why,
                        instance, Instant.now())));
            }
            return change;
        }
    }

    /** Records that a job is run now, with the state it is in (none where it has no row yet). */
    public void ranNow(String serverName, String job, String by, String why, String instance) {
        Row row = rows.get(serverName);
        JobState state = null;
        if (row != null) {
            synchronized (row) {
                state = row.state();
            }
        }
        changes.add(new Change(serverName, new JobChange(job, JobAction.RUN_NOW, state, state, by, why, instance,
                Instant.now())));
    }

    /** The changes made to a job, the latest first. */
    public List<JobChange> changes(String serverName) {
        List<JobChange> found = new ArrayList<>();
        for (int i = changes.size() - 1; i >= 0; i--) {
            if (changes.get(i).serverName().equals(serverName)) {
                found.add(changes.get(i).change());
            }
        }
        return found;
    }

    /** Every job's time without a success, as the table has it ({@link JobTable#silences}). */
    public void silences(JobTable.SilenceFound found) {
        Instant now = Instant.now();
        new TreeMap<>(rows).forEach((key, row) -> {
            Instant success = endOfLast(runs.descendingMap().values().stream()
                    .filter(run -> run.serverName().equals(key)).toList(), RunOutcome.SUCCEEDED);
            JobState state;
            Instant changed;
            synchronized (row) {
                state = row.state();
                changed = row.changed;
            }
            Instant from = success == null ? row.created : success;
            if (state == JobState.ACTIVE && changed != null && changed.isAfter(from)) {
                from = changed; // resumed or enabled: watched afresh
            }
            Duration since = Duration.between(from, now);
            found.accept(key, row.job, state, Math.max(0, since.toNanos() / 1000), success == null);
        });
    }

    /** A job's history, the latest run first. */
    public List<JobRun> history(String serverName) {
        List<JobRun> history = new ArrayList<>();
        runs.descendingMap().values().stream().filter(run -> run.serverName().equals(serverName))
                .forEach(run -> history.add(run.run()));
        return history;
    }

    private record Change(String serverName, JobChange change) {
    }

    /** A row of the history: {@code ran} if it was a run (recorded as it started), not a tick skipped. */
    private record Run(String serverName, boolean ran, JobRun run) {
    }
}
