package io.quarkiverse.mysqllock.runtime.features;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import jakarta.transaction.TransactionManager;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;
import io.quarkiverse.mysqllock.runtime.table.LockTable;

/**
 * Row locks on the lock table inside the caller's JTA transaction. The row is seeded outside the transaction (on a
 * connection of its own, committed at once), then locked through the transaction's own connection.
 */
public final class TransactionScopedLocks {

    /** MySQL's error for NOWAIT. */
    private static final int ER_LOCK_NOWAIT = 3572;

    private final AgroalDataSource dataSource;
    private final ConnectionSource connections;
    private final LockTable table;
    private final TransactionManager transactions;

    public TransactionScopedLocks(AgroalDataSource dataSource, ConnectionSource connections, LockTable table,
            TransactionManager transactions) {
        this.dataSource = dataSource;
        this.connections = connections;
        this.table = table;
        this.transactions = transactions;
    }

    public void acquire(String name, String serverName, Duration wait) {
        requireActiveTransaction(name);
        long start = System.nanoTime();
        seed(name, serverName, wait);
        long seconds = seconds(wait);
        boolean locked;
        try (Connection connection = dataSource.getConnection()) {
            ServerVersion server = connections.server(ConnectionSource.raw(connection));
            locked = lockRow(connection, server, serverName, seconds);
            if (!locked) {
                // purgeUnused removed the row since it was seeded (it may have locked it first, and this read waited
                // for it): seeded again, in this transaction (its own gap lock from the read does not stop its own
                // insert), which then holds the new row
                Statements.withLockWait(connection, Math.max(1, seconds), () -> table.seed(connection, serverName));
                locked = lockRow(connection, server, serverName, seconds);
            }
        } catch (SQLException e) {
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            if (e.getErrorCode() == SqlErrors.ER_LOCK_WAIT_TIMEOUT || e.getErrorCode() == ER_LOCK_NOWAIT) {
                throw new LockNotAcquiredException(name, waited, Reason.BUSY, null, "Lock '" + name
                        + "' is held by another transaction; not acquired within " + seconds + " s", e);
            }
            if (SqlErrors.isReadOnly(e)) {
                connections.readOnlyFound("transaction-scoped lock '" + name + "'");
                throw new LockNotAcquiredException(name, waited, Reason.READ_ONLY, null, "Lock '" + name
                        + "' was not acquired: the transaction's connection reaches a read-only server (a replica, or a"
                        + " primary demoted by a failover): " + SqlErrors.describe(e), e);
            }
            if (SqlErrors.isDeadlock(e)) {
                // InnoDB rolled the whole transaction back: nothing after this may commit on its own.
                markRollbackOnly(name);
                throw new LockNotAcquiredException(name, waited, Reason.DEADLOCK, null, "Lock '" + name
                        + "' was not acquired: the database detected a deadlock and rolled the transaction back; it is"
                        + " marked rollback-only, so nothing done in it commits. Retry the whole transaction", e);
            }
            throw new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
        }
        if (!locked) {
            // No row even after this transaction inserted it, so nothing was locked.
            throw new LockNotAcquiredException(name, Duration.ofNanos(System.nanoTime() - start), Reason.DATABASE_ERROR,
                    null, "Lock '" + name + "' was not acquired: its row in the lock table '" + table.name() + "' is"
                            + " missing although this transaction just inserted it. Something (a trigger?) renames or"
                            + " deletes rows of the lock table; only purgeUnused may delete them (it keeps their fences)",
                    null);
        }
    }

    /** The wait in whole seconds, rounded up: row-lock waits have whole seconds. */
    private static long seconds(Duration wait) {
        return wait.isZero() ? 0 : (wait.toMillis() + 999) / 1000;
    }

    private void markRollbackOnly(String name) {
        try {
            transactions.setRollbackOnly();
        } catch (SystemException | IllegalStateException e) {
            throw new IllegalStateException("Lock '" + name + "': the database rolled the transaction back after a"
                    + " deadlock, and the transaction could not be marked rollback-only", e);
        }
    }

    private void requireActiveTransaction(String name) {
        int status;
        try {
            status = transactions == null ? Status.STATUS_NO_TRANSACTION : transactions.getStatus();
        } catch (SystemException e) {
            throw new IllegalStateException("Could not read the transaction status for lock '" + name + "'", e);
        }
        if (status != Status.STATUS_ACTIVE) {
            throw new IllegalStateException("acquireForTransaction('" + name + "') needs an active JTA transaction on"
                    + " the calling thread, and there is none (status " + status + "). Call it inside a @Transactional"
                    + " method, or use acquire() for a lock that is not tied to a transaction.");
        }
    }

    /** Outside the transaction, so that the row exists for every transaction, committed or not. */
    private void seed(String name, String serverName, Duration wait) {
        ConnectionSource.Borrowed borrowed = null;
        try {
            borrowed = connections.borrowForStatements(name, wait.toNanos());
            Connection raw = borrowed.raw();
            // its insert waits for a transaction that locked the gap the row goes into: no longer than the caller's
            // wait (at least the server's 1 s)
            table.withTable(raw, () -> Statements.withLockWait(raw, Math.max(1, seconds(wait)),
                    () -> table.seedWithoutWaiting(raw, serverName)));
            connections.giveBack(borrowed);
        } catch (SQLException e) {
            if (borrowed != null) {
                connections.discard(borrowed.pooled());
            }
            if (SqlErrors.isLockWaitTimeout(e)) {
                throw new LockNotAcquiredException(name, Duration.ZERO, Reason.BUSY, null, "Lock '" + name
                        + "' was not acquired: its row could not be created within " + Math.max(1, seconds(wait))
                        + " s, as another transaction holds the rows around it", e);
            }
            throw new LockNotAcquiredException(name, Duration.ZERO, Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
        }
    }

    /** Locks the name's row, waiting up to {@code seconds} for it; false if there is none (and so nothing was locked). */
    private boolean lockRow(Connection connection, ServerVersion server, String serverName, long seconds)
            throws SQLException {
        if (seconds == 0 && server.nowait()) {
            return lockRow(connection, serverName, " NOWAIT");
        }
        if (server.mariaDb() && server.atLeast(10, 3, 0)) {
            return lockRow(connection, serverName, " WAIT " + seconds);
        }
        // MySQL has no WAIT n, and MySQL 5.7 no NOWAIT: the session's lock wait bounds this one statement, at least the
        // server's minimum of 1 s.
        return lockRowWithSessionTimeout(connection, serverName, Math.max(1, seconds));
    }

    private boolean lockRow(Connection connection, String serverName, String waitClause) throws SQLException {
        return table.lockRow(connection, serverName, waitClause);
    }

    /** The session's lock wait timeout bounds this one statement. */
    private boolean lockRowWithSessionTimeout(Connection connection, String serverName, long seconds)
            throws SQLException {
        return Statements.withLockWait(connection, seconds, () -> lockRow(connection, serverName, ""));
    }
}
