package io.quarkiverse.mysqllock.runtime.fence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

import javax.sql.DataSource;

import io.quarkiverse.mysqllock.FenceGuard;
import io.quarkiverse.mysqllock.LockFence;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/**
 * The newest token of each lock, in a reserved row of this service's lock table, {@code ~seen:<lock>} (the lock's
 * record row), its {@code fence} column. Admitting a token raises it with an {@code UPDATE} of that one row, which takes
 * the row's exclusive lock until the caller's transaction ends, then reads it back under that lock: a newer token
 * admitted first has left it higher (the token is refused), and one admitted later waits for this transaction's end.
 * The update always changes the row ({@code completed_at}, the last admission), so that a Galera cluster certifies it.
 * A lock's first admission here creates its row on a pooled connection of its own, outside the caller's transaction
 * (inserting it there could deadlock with another first admission). The row is never a lock's: purges leave it.
 */
public final class TableFenceGuard implements FenceGuard {

    private final DataSource dataSource;
    private final ConnectionSource connections;
    /** The row of a lock's newest token. */
    private final UnaryOperator<String> rowOf;
    private final String raise;
    private final String read;
    private final String plainRead;
    private final String create;
    /** The rows known to exist (they are never deleted): created once each; forgotten beyond {@link #KNOWN_ROWS}. */
    private final Set<String> created = ConcurrentHashMap.newKeySet();
    private static final int KNOWN_ROWS = 10_000;

    /** @param rowOf the row of a lock's newest token: its reserved record row, {@code ~seen:<lock>} */
    public TableFenceGuard(DataSource dataSource, ConnectionSource connections, String table,
            UnaryOperator<String> rowOf) {
        this.dataSource = dataSource;
        this.connections = connections;
        this.rowOf = rowOf;
        this.raise = "UPDATE " + table + " SET fence = GREATEST(fence, ?), completed_at = UTC_TIMESTAMP(6) WHERE name = ?";
        // a locking read: the latest committed value, which a plain read of the caller's snapshot might not be
        this.plainRead = "SELECT fence FROM " + table + " WHERE name = ?";
        this.read = plainRead + " FOR UPDATE";
        this.create = "INSERT IGNORE INTO " + table + " (name, fence, acquired_at, completed_at) VALUES (?, 0,"
                + " UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))";
    }

    @Override
    public void admit(LockFence fence) {
        String row = row(fence.lock());
        Connection connection;
        try {
            // inside a JTA transaction, the datasource gives the transaction's own connection: closing it ends nothing
            connection = dataSource.getConnection();
        } catch (SQLException e) {
            throw new IllegalStateException("The fence of lock '" + fence.lock() + "' could not be checked: no connection"
                    + " of its datasource could join the transaction (" + SqlErrors.describe(e) + "). A transaction"
                    + " joins one datasource: the fenced writes must land in the database of the lock table that keeps"
                    + " the tokens (@Fenced(datasource = ...))", e);
        }
        try (connection) {
            admitOn(fence, row, connection);
        } catch (SQLException e) {
            throw failed(fence, e);
        }
    }

    @Override
    public void admit(LockFence fence, Connection connection) {
        String row = row(fence.lock());
        try {
            if (connection.getAutoCommit()) {
                throw new IllegalArgumentException("FenceGuard.admit(fence, connection) checks the fence in the"
                        + " connection's transaction, and this connection is in autocommit mode: the check would end at"
                        + " once, before the writes it guards. Call connection.setAutoCommit(false) first");
            }
            admitOn(fence, row, connection);
        } catch (SQLException e) {
            throw failed(fence, e);
        }
    }

    private void admitOn(LockFence fence, String row, Connection connection) throws SQLException {
        if (!created.contains(row)) {
            // Created on a pooled connection of its own, outside the caller's transaction: an update of a missing row
            // there would lock the gap where it goes, and a second first admission's insert would wait for it.
            connections.withStatements(fence.lock(), raw -> {
                try (PreparedStatement statement = raw.prepareStatement(create)) {
                    statement.setString(1, row);
                    return statement.executeUpdate();
                }
            });
            if (created.size() >= KNOWN_ROWS) {
                created.clear();
            }
            created.add(row);
        }
        long newest;
        try (PreparedStatement statement = connection.prepareStatement(raise)) {
            statement.setLong(1, fence.token());
            statement.setString(2, row);
            int updated = statement.executeUpdate();
            newest = newest(connection, row);
            if (updated == 0 && newest < 0) {
                created.remove(row);
                throw FenceChecks.unavailable(fence, "its row in the lock table, " + row + ", was deleted meanwhile", null);
            }
        }
        FenceChecks.refuseIfStale(fence, newest);
    }

    @Override
    public long newest(String lock) {
        String row = row(lock);
        return connections.query(lock, "reading the newest token of lock '" + lock + "'", raw -> {
            try (PreparedStatement statement = raw.prepareStatement(plainRead)) {
                statement.setString(1, row);
                try (ResultSet rows = statement.executeQuery()) {
                    return rows.next() ? rows.getLong(1) : 0L;
                }
            }
        });
    }

    /** The row's fence, read under its exclusive lock; -1 if it has no row. */
    private long newest(Connection connection, String row) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(read)) {
            statement.setString(1, row);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? rows.getLong(1) : -1;
            }
        }
    }

    private String row(String lock) {
        try {
            return rowOf.apply(lock);
        } catch (IllegalArgumentException e) {
            throw FenceChecks.malformed(lock, "no lock can have this name: " + e.getMessage());
        }
    }

    private static RuntimeException failed(LockFence fence, SQLException e) {
        if (SqlErrors.isLockWaitTimeout(e) || SqlErrors.isDeadlock(e) || SqlErrors.isConnectionFailure(e)) {
            return FenceChecks.unavailable(fence, SqlErrors.describe(e), e);
        }
        return new IllegalStateException("The fence of lock '" + fence.lock() + "' could not be checked in the lock"
                + " table: " + SqlErrors.describe(e), e);
    }
}
