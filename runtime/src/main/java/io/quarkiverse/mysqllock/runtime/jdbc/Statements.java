package io.quarkiverse.mysqllock.runtime.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The hot statements of the engines, prepared once per physical connection and reused. The MySQL driver parses the
 * SQL of every client-side {@code prepareStatement} again (the benchmarks' profile: most of the engine's own CPU per
 * acquisition), and the pool lends the same physical connections over and over.
 * <p>
 * Statements are prepared on the driver's connection beneath the pool's wrapper, so the pool neither tracks nor closes
 * them; they hold no server resource (client-side preparation). Callers must not close them. A connection is used by
 * one thread at a time (the pool's or a pinned session's exclusion), so its statements need no locking of their own;
 * the map of connections is synchronized, and it forgets connections once they are closed.
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
}
