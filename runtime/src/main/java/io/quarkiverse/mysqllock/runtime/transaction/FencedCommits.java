package io.quarkiverse.mysqllock.runtime.transaction;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.function.ToLongFunction;

import javax.sql.DataSource;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockLostException;

/**
 * The fenced commit ({@code quarkus.mysql-lock.fenced-commit}): before a transaction that ran under a lock commits, it
 * reads the name's fence in the lock table under a shared row lock, through its own connection. Every later holder's
 * grant raises that fence (a LEASE take; on NAMED the token each grant is then issued), and raising it waits for the
 * shared lock. So a fence still equal to the hold's token means that no later holder has been granted the lock, and
 * that none can be before this transaction has ended; a greater one, that one was: the transaction must not commit.
 * The database decides: a holder paused past its lease, or whose NAMED session died, commits nothing once another
 * holder has the lock. The in-memory engine keeps its fences in memory, and is checked there ({@link #inMemory}).
 */
public final class FencedCommits {

    /** The lock's datasource, whose connection inside a transaction is the transaction's own; null in memory. */
    private final DataSource dataSource;
    private final String check;
    /** In memory: a name's newest fence, by its server name. */
    private final ToLongFunction<String> newestInMemory;

    private FencedCommits(DataSource dataSource, String table, ToLongFunction<String> newestInMemory) {
        this.dataSource = dataSource;
        this.check = table == null ? null : "SELECT fence FROM " + table + " WHERE name = ? LOCK IN SHARE MODE";
        this.newestInMemory = newestInMemory;
    }

    /**
     * @param dataSource the lock's datasource
     * @param table the lock table
     */
    public static FencedCommits inDatabase(DataSource dataSource, String table) {
        return new FencedCommits(dataSource, table, null);
    }

    /** @param newestFence a name's newest fence in the in-memory engine, by its server name */
    public static FencedCommits inMemory(ToLongFunction<String> newestFence) {
        return new FencedCommits(null, null, newestFence);
    }

    /**
     * Checks, in the transaction open on the calling thread, that {@code token} is still the name's newest fence, and
     * keeps it so until the transaction ends.
     *
     * @return null if it is; otherwise why the transaction must not commit
     */
    LockLostException check(String name, String serverName, long token) {
        if (dataSource == null) {
            return check(null, name, serverName, token);
        }
        try (Connection connection = dataSource.getConnection()) {
            return check(connection, name, serverName, token);
        } catch (SQLException e) {
            return unreadable(name, e);
        }
    }

    /**
     * The same, in the transaction of {@code connection}, a connection to the lock's database (ignored in memory).
     *
     * @return null if it is; otherwise why the transaction must not commit
     */
    public LockLostException check(Connection connection, String name, String serverName, long token) {
        long fence;
        if (dataSource == null && newestInMemory != null) {
            fence = newestInMemory.applyAsLong(serverName);
        } else {
            try (PreparedStatement statement = connection.prepareStatement(check)) {
                statement.setString(1, serverName);
                try (ResultSet rows = statement.executeQuery()) {
                    fence = rows.next() ? rows.getLong(1) : 0;
                }
            } catch (SQLException e) {
                return unreadable(name, e);
            }
        }
        if (fence == token) {
            return null;
        }
        String why = fence > token ? "was granted to a later holder (fence " + fence + ", this holder's token " + token
                + ") before this transaction committed"
                : fence == 0 ? "has no row in the lock table any more (deleted by hand?), so its token " + token
                        + " cannot be checked"
                        : "has a fence (" + fence + ") below this holder's token " + token + ": the lock table lost"
                                + " fences (a failover to a replica that had not received them?)";
        return new LockLostException(name, LockLostException.Reason.NOT_HELD, "Lock '" + name + "' " + why
                + ": the transaction is rolled back (fenced commit)", null);
    }

    /**
     * Whether the transaction open on this thread has a connection of the lock's datasource already. One that has none
     * wrote nothing there: nothing to fence (yet), and joining it now would add a second resource to a transaction of
     * another datasource.
     */
    boolean joined() {
        if (!(dataSource instanceof AgroalDataSource agroal)) {
            return true;
        }
        try {
            return agroal.getConfiguration().connectionPoolConfiguration().transactionIntegration()
                    .getTransactionAware() != null;
        } catch (SQLException | RuntimeException e) {
            return true; // cannot be told: checked, and a failure to join rolls the transaction back
        }
    }

    private static LockLostException unreadable(String name, SQLException e) {
        return new LockLostException(name, LockLostException.Reason.CONNECTION_LOST, "Lock '" + name + "': the"
                + " fenced commit could not read its fence, so the transaction does not commit: " + e.getMessage(), e);
    }
}
