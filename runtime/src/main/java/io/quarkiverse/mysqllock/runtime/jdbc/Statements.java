package io.quarkiverse.mysqllock.runtime.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.stream.Collectors;

/**
 * The hot statements of the engines, prepared once per physical connection and reused. The MySQL driver parses the
 * SQL of every client-side {@code prepareStatement} again (the benchmarks' profile: most of the engine's own CPU per
 * acquisition), and the pool lends the same physical connections over and over.
 * <p>
 * Statements are prepared on the driver's connection beneath the pool's wrapper, so the pool neither tracks nor closes
 * them; they hold no server resource (client-side preparation). Callers must not close them. A connection is used by
 * one thread at a time (the pool's or a pinned session's exclusion), so its statements need no locking of their own;
 * the map of connections is synchronized, and it forgets connections once they are closed.
 * <p>
 * Also the session settings of some work, set back after it (static): row-lock waits (per statement on MariaDB, per
 * session on MySQL) and network time-outs. Each of those methods leaves the session as it found it, or fails with the
 * work's own error.
 */
public final class Statements {

    private final Map<Connection, Map<String, PreparedStatement>> byConnection = new IdentityHashMap<>();

    /** The statement for this SQL on this connection, parameters cleared. */
    public PreparedStatement prepare(Connection raw, String sql) throws SQLException {
        return prepare(raw, sql, false);
    }

    /** As {@link #prepare(Connection, String)}, returning generated keys ({@code LAST_INSERT_ID}) when asked. */
    public PreparedStatement prepare(Connection raw, String sql, boolean generatedKeys) throws SQLException {
        Map<String, PreparedStatement> statements = statementsOf(raw);
        String key = generatedKeys ? "+keys:" + sql : sql;
        PreparedStatement statement = statements.get(key);
        if (statement == null || statement.isClosed()) {
            statement = generatedKeys ? raw.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)
                    : raw.prepareStatement(sql);
            statements.put(key, statement);
        } else {
            statement.clearParameters();
        }
        return statement;
    }

    /** Forgets a connection that is being destroyed. */
    public void forget(Connection raw) {
        synchronized (byConnection) {
            byConnection.remove(raw);
        }
    }

    /** How many connections have statements here (for tests). */
    public int connections() {
        synchronized (byConnection) {
            return byConnection.size();
        }
    }

    private Map<String, PreparedStatement> statementsOf(Connection raw) throws SQLException {
        synchronized (byConnection) {
            Map<String, PreparedStatement> statements = byConnection.get(raw);
            if (statements == null) {
                // A new physical connection: drop those the pool has closed meanwhile (idle removal, max lifetime).
                byConnection.keySet().removeIf(Statements::isClosed);
                statements = new HashMap<>();
                byConnection.put(raw, statements);
            }
            return statements;
        }
    }

    private static boolean isClosed(Connection connection) {
        try {
            return connection.isClosed();
        } catch (SQLException e) {
            return true;
        }
    }

    // --- session settings for the span of some work ---

    /**
     * Runs work with the session's row-lock wait ({@code innodb_lock_wait_timeout}) set to {@code seconds}, then sets it
     * back: for servers without a per-statement setting (MySQL), and for transactions.
     */
    public static <T> T withLockWait(Connection raw, long seconds, SqlWork<T> work) throws SQLException {
        return withSessionSettings(raw, Map.of("innodb_lock_wait_timeout", seconds), work);
    }

    /** The prefix that makes a MariaDB statement wait for no row lock (error 1205 at once). */
    public static final String NO_ROW_WAIT = "SET STATEMENT innodb_lock_wait_timeout = 0 FOR ";

    /** Work whose statements start with a prefix. */
    @FunctionalInterface
    public interface PrefixedWork<T> {
        T run(String prefix) throws SQLException;
    }

    /**
     * Runs statements that must not wait for row locks (a renewal: a transaction holding a row must cost its own lease,
     * and a statement the client gave up on must not apply later, once the row is free). MariaDB: each statement gets
     * {@link #NO_ROW_WAIT}; MySQL has no per-statement setting: the session's wait is set to its 1 s minimum, then back.
     */
    public static <T> T withoutRowWaits(Connection raw, ServerVersion server, PrefixedWork<T> work) throws SQLException {
        if (server.setStatement()) {
            return work.run(NO_ROW_WAIT);
        }
        return withLockWait(raw, 1, () -> work.run(""));
    }

    /**
     * Runs a statement that waits at most {@code seconds} (at least 1) for row locks: MariaDB prefixes it
     * ({@code SET STATEMENT innodb_lock_wait_timeout = n FOR}); MySQL sets the session's wait around it.
     */
    public static <T> T withRowWaitOf(Connection raw, ServerVersion server, long seconds, PrefixedWork<T> work)
            throws SQLException {
        long bounded = Math.max(1, seconds);
        if (server.setStatement()) {
            return work.run("SET STATEMENT innodb_lock_wait_timeout = " + bounded + " FOR ");
        }
        return withLockWait(raw, bounded, () -> work.run(""));
    }

    /** Runs work with the session's variables set as given (numeric ones), then sets them back. */
    public static <T> T withSessionSettings(Connection raw, Map<String, Long> settings, SqlWork<T> work)
            throws SQLException {
        List<String> names = List.copyOf(settings.keySet());
        List<Long> previous = new ArrayList<>(names.size());
        try (Statement statement = raw.createStatement();
                ResultSet rs = statement.executeQuery("SELECT " + names.stream().map(name -> "@@SESSION." + name)
                        .collect(Collectors.joining(", ")))) {
            rs.next();
            for (int i = 1; i <= names.size(); i++) {
                previous.add(rs.getLong(i));
            }
        }
        try (Statement statement = raw.createStatement()) {
            statement.execute(setSession(names, names.stream().map(settings::get).toList()));
            T result;
            try {
                result = work.run();
            } catch (SQLException | RuntimeException e) {
                // the work's failure is what the caller must see (a deadlock it retries), not the restore's
                try {
                    statement.execute(setSession(names, previous));
                } catch (SQLException restore) {
                    e.addSuppressed(restore);
                }
                throw e;
            }
            statement.execute(setSession(names, previous));
            return result;
        }
    }

    private static String setSession(List<String> names, List<Long> values) {
        StringJoiner assignments = new StringJoiner(", ", "SET SESSION ", "");
        for (int i = 0; i < names.size(); i++) {
            assignments.add(names.get(i) + " = " + values.get(i));
        }
        return assignments.toString();
    }

    /** Gives every statement on this driver connection at most {@code millis} to answer (the driver then closes it). */
    public static void bound(Connection raw, long millis) throws SQLException {
        raw.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, Math.max(1, millis)));
    }
}
