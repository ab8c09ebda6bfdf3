package io.quarkiverse.mysqllock.runtime.memory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;
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

    private MemoryJobs() {
    }

    static MemoryJobs of(String dataSourceName) {
        return SERVERS.computeIfAbsent(dataSourceName, ignored -> new MemoryJobs());
    }

    /** A job's row, guarded by its own monitor. */
    private static final class Row {
        final String job;
        int stateCode = 1;
        long latest;
        long settled;

        Row(String job) {
            this.job = job;
        }
    }

    /** Claims one tick of a job ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#claim}). */
    public JobClaim claim(String serverName, String job, long tick) {
        Row row = rows.computeIfAbsent(serverName, ignored -> new Row(job));
        synchronized (row) {
            if (!TickRows.claimable(tick, row.latest, row.settled)) {
                return JobClaim.TAKEN;
            }
            long previous = row.latest;
            if (tick > row.latest) {
                row.settled = row.latest;
                row.latest = tick;
            } else {
                row.settled = tick;
            }
            return JobClaim.claimed(row.stateCode, previous);
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
        runs.put(id, new Run(serverName, new JobRun(job, Instant.ofEpochMilli(tick), kind, outcome, instance, now,
                outcome.ended() ? now : null, error == null ? null : error.getClass().getName(),
                error == null ? null : error.getMessage())));
        return id;
    }

    /** Gives back the claim of a tick ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#unclaim}). */
    public void unclaim(String serverName, long tick, long previousLatest) {
        Row row = rows.get(serverName);
        if (row == null) {
            return;
        }
        synchronized (row) {
            boolean above = tick > previousLatest;
            if (row.latest == (above ? tick : previousLatest) && row.settled == (above ? previousLatest : tick)) {
                row.latest = previousLatest;
                row.settled = above ? previousLatest : tick - 1;
            }
        }
    }

    /** Records the end of the run {@code id}. */
    public void ended(long id, RunOutcome outcome, Throwable error) {
        runs.computeIfPresent(id, (key, run) -> new Run(run.serverName(), new JobRun(run.run().job(), run.run().tick(),
                run.run().kind(), outcome, run.run().instance(), run.run().startedAt(), Instant.now(),
                error == null ? null : error.getClass().getName(), error == null ? null : error.getMessage())));
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
            List<JobRun> history = history(key);
            JobRun last = history.stream().filter(run -> run.outcome().ended() && !run.outcome().name().startsWith(
                    "SKIPPED")).findFirst().orElse(null);
            long latest;
            int state;
            synchronized (row) {
                latest = row.latest;
                state = row.stateCode;
            }
            found.accept(key, new JobInfo(row.job, JobState.values()[Math.min(state, 3) - 1],
                    latest == 0 ? null : Instant.ofEpochMilli(latest), last == null ? null : last.outcome(),
                    last == null ? null : last.startedAt(), last == null ? null : last.endedAt(),
                    endOfLast(history, RunOutcome.SUCCEEDED), endOfLast(history, RunOutcome.FAILED, RunOutcome.LOST)));
        });
    }

    private static Instant endOfLast(List<JobRun> history, RunOutcome... outcomes) {
        return history.stream().filter(run -> List.of(outcomes).contains(run.outcome())).findFirst()
                .map(JobRun::endedAt).orElse(null);
    }

    /** A job's history, the latest run first. */
    public List<JobRun> history(String serverName) {
        List<JobRun> history = new ArrayList<>();
        runs.descendingMap().values().stream().filter(run -> run.serverName().equals(serverName))
                .forEach(run -> history.add(run.run()));
        return history;
    }

    private record Run(String serverName, JobRun run) {
    }
}
