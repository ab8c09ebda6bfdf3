package io.quarkiverse.mysqllock.runtime.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.stream.Collectors;

/**
 * Session settings for the span of some work, set back after it: row-lock waits (per statement on MariaDB, per session
 * on MySQL) and network time-outs. Each method leaves the session as it found it, or fails with the work's own error.
 */
public final class SessionSettings {

    private SessionSettings() {
    }

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
