package io.quarkiverse.mysqllock.runtime.jobs;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;
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
    /** This instance's holder identity, as the history names it. */
    private final String identity;
    /**
     * How often this instance makes sure of a job's row again: a row deleted by hand (or a table re-created) comes back
     * within this period, whatever instance's claim meets it, at one statement per job and period, not per tick.
     */
    static final long RESEED_NANOS = TimeUnit.MINUTES.toNanos(1);

    /** The jobs whose row this instance made sure of, with when ({@link System#nanoTime()}). */
    private final Map<String, Long> seeded = new ConcurrentHashMap<>();

    public DatabaseJobs(ConnectionSource connections, LockTable locks, String identity) {
        this.connections = connections;
        this.locks = locks;
        this.jobs = new JobTable(locks);
        this.runs = new RunTable(locks, jobs);
        this.tickRows = new TickRows(locks);
        this.identity = identity;
    }

    /** Claims one tick of a job ({@link JobTable#claim}, then its tick row for the instance that runs it). */
    @Override
    public JobClaim claim(String name, String serverName, String tickRow, long tick) {
        return statements(name, "The jobs table could not claim a tick of '" + name + "'",
                raw -> jobs.withTables(raw, () -> claimSeeded(raw, name, serverName, tickRow, tick)));
    }

    @Override
    public boolean claimOlderRow(String name, String tickRow, long tick) {
        return statements(name, "The tick row of '" + name + "' could not claim tick " + tick
                + " (claimed in the jobs table, and given back)",
                raw -> locks.withTable(raw, () -> tickRows.claim(raw, tickRow, tick)));
    }

    @Override
    public void unclaim(String name, String serverName, long tick, long previousLatest) {
        statements(name, "The claim of tick " + tick + " of '" + name + "' could not be given back: no instance runs it",
                raw -> jobs.unclaim(raw, serverName, tick, previousLatest));
    }

    /** The claim, the job's row made sure of first when this instance has not yet (or the table was created since). */
    private JobClaim claimSeeded(Connection raw, String name, String serverName, String tickRow, long tick)
            throws SQLException {
        try {
            Long since = seeded.get(serverName);
            long now = System.nanoTime();
            if (since == null || now - since > RESEED_NANOS) {
                jobs.seed(raw, serverName, name, tickRow);
                seeded.put(serverName, now);
            }
            return jobs.claim(raw, serverName, tick);
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
    public void skipped(String name, String serverName, long tick, RunKind kind, RunOutcome outcome,
            Throwable error) {
        history(name, "record a skipped tick", raw -> runs.insert(raw, serverName, tick, kind, outcome, identity,
                error));
    }

    @Override
    public void ended(String name, long id, RunOutcome outcome, Throwable error) {
        history(name, "record the end of a run", raw -> {
            runs.end(raw, id, outcome, error);
            return null;
        });
    }

    @Override
    public void read(String serverName, BiConsumer<String, JobInfo> found) {
        read(serverName == null ? "(jobs)" : serverName, "read the jobs table", null, raw -> {
            jobs.read(raw, serverName, found);
            return null;
        });
    }

    @Override
    public List<JobRun> history(String name, String serverName, int limit) {
        return read(name, "read the history of a job", List.of(), raw -> runs.history(raw, serverName, name, limit));
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
