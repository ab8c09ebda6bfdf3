package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.List;
import java.util.function.BiConsumer;

import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.runtime.memory.MemoryJobs;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;

/** The jobs of the in-memory engine, kept in its memory as the database keeps them. */
final class MemoryJobStore implements JobStore {

    private final MemoryJobs jobs;
    private final String identity;

    MemoryJobStore(InMemoryEngine engine) {
        this.jobs = engine.jobs();
        this.identity = engine.identity();
    }

    @Override
    public JobClaim claim(String name, String serverName, String tickRow, long tick) {
        return jobs.claim(serverName, name, tick);
    }

    @Override
    public boolean claimOlderRow(String name, String tickRow, long tick) {
        return true;
    }

    @Override
    public void unclaim(String name, String serverName, long tick, long previousLatest) {
        jobs.unclaim(serverName, tick, previousLatest);
    }

    @Override
    public long started(String name, String serverName, long tick, RunKind kind) {
        return jobs.record(serverName, name, tick, kind, RunOutcome.RUNNING, identity, null);
    }

    @Override
    public void skipped(String name, String serverName, long tick, RunKind kind, RunOutcome outcome,
            Throwable error) {
        jobs.record(serverName, name, tick, kind, outcome, identity, error);
    }

    @Override
    public void ended(String name, long id, RunOutcome outcome, Throwable error) {
        jobs.ended(id, outcome, error);
    }

    @Override
    public void read(String serverName, BiConsumer<String, JobInfo> found) {
        jobs.read(serverName, found);
    }

    @Override
    public List<JobRun> history(String name, String serverName, int limit) {
        return jobs.history(serverName).stream().limit(limit).toList();
    }
}
