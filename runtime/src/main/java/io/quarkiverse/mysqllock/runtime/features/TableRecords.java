package io.quarkiverse.mysqllock.runtime.features;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jobs.DatabaseJobs;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.UnusedRows;

/**
 * What the lock table records beside locks: cluster-wide run-once completions (the lock of the name, and a completion
 * time in its row), the jobs table of scheduled jobs, each semaphore's number of permits, and the removal of rows
 * nobody uses any more.
 */
public final class TableRecords {

    private final ConnectionSource connections;
    private final LockTable table;
    private final DatabaseJobs jobs;
    /** quarkus.mysql-lock.lease.max-clock-skew, in microseconds: what a purge may remove of an owned row. */
    private final long longDeadMicros;

    /** @param identity this instance's holder identity, as the jobs' history names it */
    public TableRecords(ConnectionSource connections, LockTable table, long longDeadMicros, String identity) {
        this.connections = connections;
        this.table = table;
        this.jobs = new DatabaseJobs(connections, table, identity);
        this.longDeadMicros = longDeadMicros;
    }

    /** The datasource whose lock table this uses. */
    public String dataSourceName() {
        return connections.dataSourceName();
    }

    public boolean run(String name, String serverName, Runnable action, Supplier<ControlledHandle> lock) {
        if (completed(name, serverName)) {
            return false;
        }
        ControlledHandle handle = lock.get();
        boolean ran;
        try {
            // Whoever held the lock before may have completed it meanwhile.
            ran = !completed(name, serverName);
            if (ran) {
                action.run();
                record(name, serverName);
            }
        } catch (Throwable failure) {
            LockLostException lost = handle.releaseReportingLoss();
            if (lost != null) {
                failure.addSuppressed(ControlledHandle.lostDuring("the run-once", lost));
            }
            throw failure;
        }
        // The release itself may find the loss (a session killed since the last keepalive, a lease taken over).
        LockLostException lost = handle.releaseReportingLoss();
        if (ran && lost != null) {
            throw new LockLostException(name, lost.reason(), "The run-once '" + name + "' completed, but its lock was"
                    + " lost while it ran: another instance may have run it too. " + lost.getMessage(), lost);
        }
        return ran;
    }

    /** The jobs table of this datasource. */
    public DatabaseJobs jobs() {
        return jobs;
    }

    /**
     * A semaphore's number of permits for the fleet ({@link LockTable#storedPermits}): the stored one, or
     * {@code proposed}, stored now if none was (a concurrent first store may win: the answer is what was stored). Read
     * as the server's latest (on Galera, after every write the cluster committed before it).
     */
    public int permits(String name, String row, int proposed) {
        int stored = storedPermits(name, row);
        if (stored != 0) {
            return stored;
        }
        withStatements(name, borrowed -> table.withTable(borrowed.raw(), () -> {
            table.seedPermits(borrowed.raw(), row, proposed);
            return null;
        }));
        return storedPermits(name, row);
    }

    /** Stores a semaphore's number of permits ({@link LockTable#changePermits}): the number stored afterwards. */
    public int changePermits(String name, String row, int permits, boolean onlyUpward) {
        withStatements(name, borrowed -> table.withTable(borrowed.raw(), () -> {
            table.changePermits(borrowed.raw(), row, permits, onlyUpward);
            return null;
        }));
        return storedPermits(name, row);
    }

    private int storedPermits(String name, String row) {
        return connections.query(name, "reading the number of permits of '" + name + "'",
                raw -> table.withTable(raw, () -> table.storedPermits(raw, row)));
    }

    /** Removes the lock table's unused rows ({@link UnusedRows}): how many. */
    public long purgeUnused(Duration unusedFor) {
        return withStatements("(purge)", borrowed -> new UnusedRows(table, longDeadMicros).purge(borrowed.raw(),
                connections.server(borrowed.raw()), TimeUnit.NANOSECONDS.toMicros(unusedFor.toNanos())));
    }

    private boolean completed(String name, String serverName) {
        return withStatements(name, borrowed -> table.withTable(borrowed.raw(),
                () -> table.completed(borrowed.raw(), serverName)));
    }

    private void record(String name, String serverName) {
        withStatements(name, borrowed -> table.withTable(borrowed.raw(), () -> {
            table.markCompleted(borrowed.raw(), serverName);
            return null;
        }));
    }

    private <T> T withStatements(String name, Work<T> work) {
        ConnectionSource.Borrowed borrowed = null;
        try {
            borrowed = connections.borrowForStatements(name, 0);
            T result = work.run(borrowed);
            connections.giveBack(borrowed);
            return result;
        } catch (SQLException e) {
            if (borrowed != null) {
                connections.discard(borrowed.pooled());
            }
            throw new IllegalStateException("The lock table could not be read or written for '" + name + "': "
                    + SqlErrors.describe(e), e);
        }
    }

    private interface Work<T> {
        T run(ConnectionSource.Borrowed borrowed) throws SQLException;
    }

    /** What the in-memory engine cannot do: it has no lock table to keep records in. */
    public static UnsupportedOperationException databaseOnly(String what) {
        return new UnsupportedOperationException(what + " keeps its records in the database, which the in-memory engine"
                + " (quarkus.mysql-lock.in-memory) does not have: test it against a real server (the test kit's"
                + " @EmbeddedMariaDb)");
    }
}
