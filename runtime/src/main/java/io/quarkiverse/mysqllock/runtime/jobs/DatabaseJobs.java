package io.quarkiverse.mysqllock.runtime.jobs;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.jobs.JobAction;
import io.quarkiverse.mysqllock.jobs.JobChange;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.table.AuditTable;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;
import io.quarkiverse.mysqllock.runtime.table.JobStateChange;
import io.quarkiverse.mysqllock.runtime.table.JobTable;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.RunTable;
import io.quarkiverse.mysqllock.runtime.table.TickRows;

/**
 * The jobs tables of one datasource. A tick's claim: the claim in the jobs table, and for the instance that claimed it
 * and holds the job's lock, the same claim in the job's tick row of the lock table, where versions before the jobs table
 * claim ticks (so that such an instance, in the fleet during a rolling upgrade or after a rollback, runs no tick twice).
 * The run history: a row per run as it starts, completed as it ends.
 */
public final class DatabaseJobs implements JobStore {

    private final ConnectionSource connections;
    private final LockTable locks;
    private final JobTable jobs;
    private final RunTable runs;
    private final TickRows tickRows;
    private final AuditTable audit;
    /** This instance's holder identity, as the history names it. */
    private final String identity;
    /**
     * How often this instance makes sure of a job's row again: a row deleted by hand (or a table re-created) comes back
     * within this period, whatever instance's claim meets it, at one statement per job and period, not per tick.
     */
    static final long RESEED_NANOS = TimeUnit.MINUTES.toNanos(1);

    /** The jobs whose row this instance made sure of, with when ({@link System#nanoTime()}). */
    private final Map<String, Long> seeded = new ConcurrentHashMap<>();
    /** The jobs whose old history rows this instance last looked for, with when ({@link System#nanoTime()}). */
    private final Map<String, Long> purged = new ConcurrentHashMap<>();
    private volatile HistoryRetention retention = HistoryRetention.DEFAULT;
    private static final Logger LOG = Logger.getLogger(DatabaseJobs.class);

    public DatabaseJobs(ConnectionSource connections, LockTable locks, String identity) {
        this.connections = connections;
        this.locks = locks;
        this.jobs = new JobTable(locks);
        this.runs = new RunTable(locks, jobs);
        this.tickRows = new TickRows(locks);
        this.audit = new AuditTable(locks);
        this.identity = identity;
    }

    /** Claims one tick of a job ({@link JobTable#claim}, then its tick row for the instance that runs it). */
    @Override
    public JobClaim claim(String name, String serverName, String tickRow, long tick, long missedBefore,
            java.time.Instant nextFire) {
        return statements(name, "The jobs table could not claim a tick of '" + name + "'",
                // on Galera, a claim that lost certification to another node's claim of the tick: it decides again
                raw -> jobs.withTables(raw, () -> SqlErrors.retryingConflicts(TickRows.DEADLOCK_RETRIES,
                        () -> claimSeeded(raw, name, serverName, tickRow, tick, missedBefore, nextFire))));
    }

    @Override
    public boolean claimOlderRow(String name, String tickRow, long tick) {
        return statements(name, "The tick row of '" + name + "' could not claim tick " + tick
                + " (claimed in the jobs table, and given back)",
                raw -> locks.withTable(raw, () -> tickRows.claim(raw, tickRow, tick)));
    }

    @Override
    public void unclaim(String name, String serverName, long tick, JobClaim claim) {
        statements(name, "The claim of tick " + tick + " of '" + name + "' could not be given back: no instance runs it",
                raw -> jobs.unclaim(raw, serverName, tick, claim));
    }

    @Override
    public long[] catchUpRange(String name, String serverName) {
        return statements(name, "The missed ticks of '" + name + "' could not be read",
                raw -> jobs.catchUps().read(raw, serverName));
    }

    @Override
    public boolean takeCatchUp(String name, String serverName, long[] range, long[] left) {
        return statements(name, "The missed ticks of '" + name + "' could not be taken to catch up",
                raw -> jobs.catchUps().take(raw, serverName, range, left));
    }

    @Override
    public void queue(String name, String serverName, long tick) {
        statements(name, "A run of '" + name + "' could not be queued", raw -> {
            jobs.queue(raw, serverName, tick);
            return null;
        });
    }

    @Override
    public long queued(String name, String serverName) {
        return statements(name, "The queued run of '" + name + "' could not be read", raw -> jobs.queued(raw, serverName));
    }

    @Override
    public boolean takeQueued(String name, String serverName, long tick) {
        return statements(name, "The queued run of '" + name + "' could not be taken",
                raw -> jobs.takeQueued(raw, serverName, tick));
    }

    /** The claim, the job's row made sure of first when this instance has not yet (or the table was created since). */
    private JobClaim claimSeeded(Connection raw, String name, String serverName, String tickRow, long tick,
            long missedBefore, java.time.Instant nextFire) throws SQLException {
        try {
            Long since = seeded.get(serverName);
            long now = System.nanoTime();
            if (since == null || now - since > RESEED_NANOS) {
                jobs.seed(raw, serverName, name, tickRow);
                seeded.put(serverName, now);
            }
            // a job that catches up reads the ticks versions before the jobs table claimed (a plain read, no lock): none
            // of them is missed
            long olderFence = missedBefore > 0 ? tickRows.fence(raw, tickRow) : 0;
            return jobs.claim(raw, serverName, tick, missedBefore, olderFence, nextFire);
        } catch (SQLException e) {
            if (SqlErrors.isMissingTable(e)) {
                seeded.clear(); // a table created again has none of the rows
            }
            throw e;
        }
    }

    @Override
    public long started(String name, String serverName, long tick, RunKind kind) {
        return history(name, "record the start of a run", raw -> runs.insert(raw, serverName, tick, kind,
                RunOutcome.RUNNING, identity, null));
    }

    @Override
    public void ranAs(String name, String serverName, long tick, RunOutcome outcome, String instance) {
        history(name, "record a run of " + instance, raw -> {
            runs.end(raw, runs.insert(raw, serverName, tick, RunKind.SCHEDULED, RunOutcome.RUNNING, instance, null),
                    outcome, null);
            return null;
        });
    }

    @Override
    public void skipped(String name, String serverName, long tick, RunKind kind, RunOutcome outcome,
            Throwable error) {
        history(name, "record a skipped tick", raw -> runs.insert(raw, serverName, tick, kind, outcome, identity,
                error));
    }

    @Override
    public void ended(String name, String serverName, long id, RunOutcome outcome, Throwable error) {
        history(name, "record the end of a run", raw -> {
            runs.end(raw, id, outcome, error);
            return null;
        });
    }

    @Override
    public void trim(String name, String serverName) {
        long now = System.nanoTime();
        Long since = purged.get(serverName);
        boolean due = since == null ? purged.putIfAbsent(serverName, now) == null
                : now - since >= HistoryRetention.PERIOD_NANOS && purged.replace(serverName, since, now);
        if (!due) {
            return; // looked at lately, or by another thread now
        }
        HistoryRetention kept = retention;
        try {
            int removed = history(name, "remove old rows of the history", raw -> runs.purge(raw, serverName,
                    kept.keepRuns(), kept.keepForMicros(), HistoryRetention.BATCH, HistoryRetention.MAX_BATCHES));
            if (removed > 0) {
                LOG.debugf("Removed %d rows of the history of job '%s'", removed, name);
            }
        } catch (RuntimeException e) {
            LOG.warnf("Old rows of the history of job '%s' could not be removed (again in %d minutes): %s", name,
                    TimeUnit.NANOSECONDS.toMinutes(HistoryRetention.PERIOD_NANOS), e.getMessage());
        }
    }

    @Override
    public void retain(HistoryRetention retention) {
        this.retention = retention;
    }

    @Override
    public void read(String serverName, BiConsumer<String, JobInfo> found) {
        read(serverName == null ? "(jobs)" : serverName, "read the jobs table", null, raw -> {
            jobs.read(raw, serverName, found);
            return null;
        });
    }

    @Override
    public void silences(BiConsumer<String, JobSilences.Silence> found, long readNanos) {
        read("(jobs)", "read the jobs' last successes", null, raw -> {
            jobs.silences(raw, (key, job, state, micros, never) -> found.accept(key,
                    new JobSilences.Silence(job, state, micros, never, readNanos)));
            return null;
        });
    }

    @Override
    public List<JobRun> history(String name, String serverName, int limit) {
        return read(name, "read the history of a job", List.of(), raw -> runs.history(raw, serverName, name, limit));
    }

    @Override
    public JobStateChange change(String name, String serverName, JobAction action, String by, String why) {
        return statements(name, "Could not " + action.name().toLowerCase(Locale.ROOT) + " job '" + name + "'", raw -> {
            audit.ensure(raw); // before the transaction: a CREATE TABLE would commit it
            // on Galera, a claim of the job's row committed on another node fails this commit: it decides again
            return SqlErrors.retryingConflicts(TickRows.DEADLOCK_RETRIES,
                    () -> changeOnce(raw, name, serverName, action, by, why));
        });
    }

    /** One transaction: the job's row locked, its state changed unless it already is so, the change recorded. */
    private JobStateChange changeOnce(Connection raw, String name, String serverName, JobAction action, String by,
            String why) throws SQLException {
        raw.setAutoCommit(false);
        boolean done = false;
        try {
            JobState from = jobs.lockState(raw, serverName);
            JobStateChange change = from == null ? null : JobStateChange.of(action, name, from);
            if (change != null && change.to() != null) {
                if (change.to() != from) {
                    jobs.setState(raw, serverName, change.to(), by, System.currentTimeMillis());
                }
                audit.record(raw, action.name(), serverName, name, by, why, identity, change.detail());
                raw.commit();
                done = true;
            }
            return change;
        } finally {
            if (!done) {
                raw.rollback();
            }
            raw.setAutoCommit(true);
        }
    }

    @Override
    public void seed(String name, String serverName, String tickRow) {
        statements(name, "Could not make the row of job '" + name + "' in the jobs table",
                raw -> jobs.withTables(raw, () -> {
                    jobs.seed(raw, serverName, name, tickRow);
                    return null;
                }));
    }

    @Override
    public void audit(String action, String serverName, String target, String by, String why, String detail) {
        statements(target, "Could not record " + action + " of '" + target + "' in the audit trail", raw -> {
            audit.ensure(raw);
            audit.record(raw, action, serverName, target, by, why, identity, detail);
            return null;
        });
    }

    @Override
    public void ranNow(String name, String serverName, String by, String why) {
        statements(name, "Could not record the run-now of job '" + name + "'", raw -> {
            audit.ensure(raw);
            JobState state = jobs.state(raw, serverName);
            audit.record(raw, JobAction.RUN_NOW.name(), serverName, name, by, why, identity,
                    state == null ? null : JobStateChange.of(JobAction.RUN_NOW, name, state).detail());
            return null;
        });
    }

    @Override
    public List<JobChange> changes(String name, String serverName, int limit) {
        return read(name, "read the changes of a job", List.of(), raw -> audit.read(raw, serverName, limit).stream()
                .map(entry -> JobChanges.of(name, entry)).flatMap(java.util.Optional::stream).toList());
    }

    /** A read of the jobs tables: {@code none} where a table is not created yet (a read never creates one). */
    private <T> T read(String name, String what, T none, ConnectionSource.Work<T> work) {
        return connections.query(name, what, raw -> {
            try {
                return work.run(raw);
            } catch (SQLException e) {
                if (!SqlErrors.isMissingTable(e)) {
                    throw e;
                }
                return none;
            }
        });
    }

    /**
     * Work on the history table, created when missing. Never the jobs table: only a claim creates it, and makes sure of
     * the job's row with it.
     */
    private <T> T history(String name, String what, ConnectionSource.Work<T> work) {
        return statements(name, "Could not " + what + " of '" + name + "'",
                raw -> runs.withTable(raw, () -> work.run(raw)));
    }

    /** Statements on a connection borrowed for them; a failure is thrown as {@code failure}, with the server's error. */
    private <T> T statements(String name, String failure, ConnectionSource.Work<T> work) {
        try {
            return connections.withStatements(name, work);
        } catch (SQLException e) {
            throw new IllegalStateException(failure + ": " + SqlErrors.describe(e), e);
        }
    }
}
