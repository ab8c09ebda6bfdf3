package io.quarkiverse.mysqllock.deployment.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

import io.quarkiverse.mysqllock.test.TestDatabase;

/** What the server itself says, read on a connection of its own. */
public final class ServerState {

    private ServerState() {
    }

    /** The session holding a named lock, by its server name. */
    public static Optional<Long> holder(String serverName) {
        try (Connection connection = TestDatabase.shared().connect();
                PreparedStatement statement = connection.prepareStatement("SELECT IS_USED_LOCK(?)")) {
            statement.setString(1, serverName);
            ResultSet rs = statement.executeQuery();
            rs.next();
            long id = rs.getLong(1);
            return rs.wasNull() ? Optional.empty() : Optional.of(id);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The client port a server with privilege checks on sees for a session: with a proxy in between, the proxy's end of
     * that connection.
     */
    public static int clientPort(TestDatabase server, long connectionId) {
        String host;
        try (Connection connection = server.connect();
                PreparedStatement statement = connection
                        .prepareStatement("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = ?")) {
            statement.setLong(1, connectionId);
            ResultSet rs = statement.executeQuery();
            host = rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        if (host == null || host.lastIndexOf(':') < 0) {
            throw new IllegalStateException("Session " + connectionId + " shows no client port: " + host);
        }
        return Integer.parseInt(host.substring(host.lastIndexOf(':') + 1));
    }

    /** How many sessions are inside a GET_LOCK wait now. */
    public static long waitingInGetLock() {
        return queryLong("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT GET_LOCK(%'");
    }

    /** The sessions waiting in {@code GET_LOCK} for this lock (a name sent as it is). */
    public static long waitingInGetLock(String serverName) {
        return queryLong("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?",
                "SELECT GET_LOCK('" + serverName + "'%");
    }

    public static String queryString(String sql, Object... args) {
        try (Connection connection = TestDatabase.shared().connect();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setObject(i + 1, args[i]);
            }
            ResultSet rs = statement.executeQuery();
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public static int update(String sql, Object... args) {
        try (Connection connection = TestDatabase.shared().connect();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setObject(i + 1, args[i]);
            }
            return statement.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A number read on a session of the test's own (one holding a lock, say). */
    public static long queryLongOn(Connection connection, String sql) {
        try (java.sql.Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            if (!rs.next()) {
                throw new IllegalStateException("No row: " + sql);
            }
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public static long queryLong(String sql, Object... args) {
        return TestDatabase.shared().queryLong(sql, args);
    }

    /**
     * Forgets what earlier test classes of the same server left of the jobs whose names match {@code like} (a LIKE
     * pattern): their rows in the jobs table, their history, and the tick rows of versions before the jobs table.
     */
    public static void forgetJobs(String like) {
        for (String[] rows : java.util.List.of(new String[] { "mysql_lock_job", like },
                new String[] { "mysql_lock_run", like }, new String[] { "mysql_lock", "tick@" + like })) {
            if (queryLong("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"
                    + " AND table_name = ?", rows[0]) > 0) {
                update("DELETE FROM " + rows[0] + " WHERE name LIKE ?", rows[1]);
            }
        }
    }
}
