package io.quarkiverse.mysqllock.runtime;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;

import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import jakarta.transaction.TransactionManager;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;

/**
 * Row locks on the lock table inside the caller's JTA transaction. The row is seeded outside the transaction (on a
 * connection of its own, committed at once), then locked through the transaction's own connection.
 */
public final class TransactionScopedLocks {

    /** MySQL's error for a lock wait that timed out, and MariaDB's for NOWAIT too. */
    private static final int ER_LOCK_WAIT_TIMEOUT = 1205;
    /** MySQL's error for NOWAIT. */
    private static final int ER_LOCK_NOWAIT = 3572;

    private final AgroalDataSource dataSource;
    private final ConnectionSource connections;
    private final LockTable table;
    private final TransactionManager transactions;
    private volatile Boolean mariaDb;

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
        long seconds = wait.isZero() ? 0 : (wait.toMillis() + 999) / 1000;
        try (Connection connection = dataSource.getConnection()) {
            if (mariaDb == null) {
                mariaDb = isMariaDb(connection);
            }
            if (mariaDb) {
                lockRow(connection, serverName, seconds == 0 ? " NOWAIT" : " WAIT " + seconds);
            } else if (seconds == 0) {
                lockRow(connection, serverName, " NOWAIT");
            } else {
                lockRowWithSessionTimeout(connection, serverName, seconds);
            }
        } catch (SQLException e) {
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            if (e.getErrorCode() == ER_LOCK_WAIT_TIMEOUT || e.getErrorCode() == ER_LOCK_NOWAIT) {
                throw new LockNotAcquiredException(name, waited, Reason.BUSY, null, "Lock '" + name
                        + "' is held by another transaction; not acquired within " + seconds + " s", e);
            }
            if (SqlErrors.isDeadlock(e)) {
                throw new LockNotAcquiredException(name, waited, Reason.DEADLOCK, null, "Lock '" + name
                        + "' was not acquired: the database detected a deadlock and rolled the transaction back", e);
            }
            throw new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
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
            table.withTable(raw, () -> {
                table.seedWithoutWaiting(raw, serverName);
                return null;
            });
            connections.giveBack(borrowed);
        } catch (SQLException e) {
            if (borrowed != null) {
                connections.discard(borrowed.pooled());
            }
            throw new LockNotAcquiredException(name, Duration.ZERO, Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
        }
    }

    private void lockRow(Connection connection, String serverName, String waitClause) throws SQLException {
        try (PreparedStatement statement = connection
                .prepareStatement("SELECT fence FROM " + table.name() + " WHERE name = ? FOR UPDATE" + waitClause)) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
            }
        }
    }

    /** MySQL has no {@code WAIT n}: the session's lock wait timeout bounds this one statement. */
    private void lockRowWithSessionTimeout(Connection connection, String serverName, long seconds) throws SQLException {
        long previous;
        try (Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT @@SESSION.innodb_lock_wait_timeout")) {
            rs.next();
            previous = rs.getLong(1);
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET SESSION innodb_lock_wait_timeout = " + seconds);
            try {
                lockRow(connection, serverName, "");
            } finally {
                statement.execute("SET SESSION innodb_lock_wait_timeout = " + previous);
            }
        }
    }

    private static boolean isMariaDb(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SELECT VERSION()")) {
            rs.next();
            return rs.getString(1).toLowerCase(Locale.ROOT).contains("mariadb");
        }
    }
}
