package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A job's ranges of missed ticks in the jobs table ({@link JobTable}): read, and taken by a catch-up with a conditional
 * write of all four columns. The claim records them ({@link JobTable#claim}).
 */
public final class CatchUpRanges {

    private final String table;
    private final String ddl;

    CatchUpRanges(String table, String ddl) {
        this.table = table;
        this.ddl = ddl;
    }

    /**
     * A job's missed ticks to catch up while it is active, {@code {after, upTo, nextAfter, nextUpTo}}: the pending
     * range, the ticks after the first up to the second, then the next range apart from it (0, 0: none); null for none.
     */
    public long[] read(Connection connection, String serverName) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT catch_up_from, catch_up_to,"
                + " next_catch_up_from, next_catch_up_to FROM " + table + " WHERE name = ? AND (catch_up_to > 0"
                + " OR next_catch_up_to > 0) AND UPPER(state) = 'ACTIVE'")) {
            statement.setString(1, serverName);
            return JobColumns.described(() -> {
                try (ResultSet rs = statement.executeQuery()) {
                    return rs.next() ? new long[] { rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4) } : null;
                }
            }, connection, table, ddl);
        }
    }

    /**
     * Takes a job's missed ticks to catch up, as {@link #read} read them, unless they changed since (or the job
     * is no longer active): {@code left}, in the same form, is what is left for later.
     *
     * @return whether this call took them
     */
    public boolean take(Connection connection, String serverName, long[] range, long[] left)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table
                + " SET catch_up_from = ?, catch_up_to = ?, next_catch_up_from = ?, next_catch_up_to = ? WHERE name = ?"
                + " AND catch_up_from = ? AND catch_up_to = ? AND next_catch_up_from = ? AND next_catch_up_to = ?"
                + " AND UPPER(state) = 'ACTIVE'")) {
            for (int i = 0; i < 4; i++) {
                statement.setLong(1 + i, left[i]);
                statement.setLong(6 + i, range[i]);
            }
            statement.setString(5, serverName);
            return JobColumns.executeUpdate(statement, connection, table, ddl) == 1;
        }
    }
}
