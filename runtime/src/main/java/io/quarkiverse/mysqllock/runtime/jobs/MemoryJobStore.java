package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.List;
import java.util.function.BiConsumer;

import io.quarkiverse.mysqllock.jobs.JobAction;
import io.quarkiverse.mysqllock.jobs.JobChange;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.runtime.memory.MemoryJobs;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;
import io.quarkiverse.mysqllock.runtime.table.JobStateChange;

/** The jobs of the in-memory engine, kept in its memory as the database keeps them. */
final class MemoryJobStore implements JobStore {

    private final MemoryJobs jobs;
    private final String identity;
    private volatile HistoryRetention retention = HistoryRetention.DEFAULT;

    MemoryJobStore(InMemoryEngine engine) {
        this.jobs = engine.jobs();
        this.identity = engine.identity();
    }

    @Override
    public JobClaim claim(String name, String serverName, String tickRow, long tick, long missedBefore,
            java.time.Instant nextFire) {
        return jobs.claim(serverName, name, tick, missedBefore, nextFire);
    }

    @Override
    public boolean claimOlderRow(String name, String tickRow, long tick) {
        return true;
    }

    @Override
    public void unclaim(String name, String serverName, long tick, JobClaim claim) {
        jobs.unclaim(serverName, tick, claim);
    }

    @Override
    public long[] catchUpRange(String name, String serverName) {
        return jobs.catchUpRange(serverName);
    }

    @Override
    public boolean takeCatchUp(String name, String serverName, long[] range, long[] left) {
        return jobs.takeCatchUp(serverName, range, left);
    }

    @Override
    public void queue(String name, String serverName, long tick) {
        jobs.queue(serverName, tick);
    }

    @Override
    public long queued(String name, String serverName) {
        return jobs.queued(serverName);
    }

    @Override
    public boolean takeQueued(String name, String serverName, long tick) {
        return jobs.takeQueued(serverName, tick);
    }

    @Override
    public long started(String name, String serverName, long tick, RunKind kind) {
        return jobs.record(serverName, name, tick, kind, RunOutcome.RUNNING, identity, null);
    }

    @Override
    public void ranAs(String name, String serverName, long tick, RunOutcome outcome, String instance) {
        jobs.ended(jobs.record(serverName, name, tick, RunKind.SCHEDULED, RunOutcome.RUNNING, instance, null), outcome,
                null);
    }

    @Override
    public void skipped(String name, String serverName, long tick, RunKind kind, RunOutcome outcome,
            Throwable error) {
        jobs.record(serverName, name, tick, kind, outcome, identity, error);
    }

    @Override
    public void ended(String name, String serverName, long id, RunOutcome outcome, Throwable error) {
        jobs.ended(id, outcome, error);
    }

    @Override
    public void trim(String name, String serverName) {
        HistoryRetention kept = retention;
        jobs.trim(serverName, kept.keepRuns(), kept.keepFor());
    }

    @Override
    public void retain(HistoryRetention retention) {
        this.retention = retention;
    }

    @Override
    public void read(String serverName, BiConsumer<String, JobInfo> found) {
        jobs.read(serverName, found);
    }

    @Override
    public List<JobRun> history(String name, String serverName, int limit) {
        return jobs.history(serverName).stream().limit(limit).toList();
    }

    @Override
    public JobStateChange change(String name, String serverName, JobAction action, String by, String why) {
        return jobs.change(serverName, name, action, by, why, identity);
    }

    @Override
    public List<JobChange> changes(String name, String serverName, int limit) {
        return jobs.changes(serverName).stream().limit(limit).toList();
    }

    @Override
    public void ranNow(String name, String serverName, String by, String why) {
        jobs.ranNow(serverName, name, by, why, identity);
    }

    @Override
    public void silences(BiConsumer<String, JobSilences.Silence> found, long readNanos) {
        jobs.silences((key, job, state, micros, never) -> found.accept(key,
                new JobSilences.Silence(job, state, micros, never, readNanos)));
    }

    @Override
    public void seed(String name, String serverName, String tickRow) {
        jobs.seed(serverName, name);
    }

    /** The in-memory engine keeps no audit trail of locks: it is for tests and dev mode, one process. */
    @Override
    public void audit(String action, String serverName, String target, String by, String why, String detail) {
    }
}
