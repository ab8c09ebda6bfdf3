package io.quarkiverse.mysqllock.deployment.jobs;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * An instance of a version before the jobs table, on a connection of its own: its claim of a tick as it shipped (the
 * statements of its {@code TickRows} and {@code TickClaims}, copied here, so that this test keeps them whatever the
 * product becomes): read whether the tick row says the tick ran, take the job's lock ({@code GET_LOCK}, the NAMED
 * engine), claim the tick in the row, run, release.
 */
final class OlderVersionTicks {

    private static final String SETTLED = "IF(owner REGEXP '^[0-9]{1,18} [0-9]{1,18}$',"
            + " IF(CAST(SUBSTRING_INDEX(owner, ' ', -1) AS SIGNED) = fence, CAST(SUBSTRING_INDEX(owner, ' ', 1) AS SIGNED),"
            + " fence), fence)";
    private static final String CLAIMABLE = "(? > fence OR (? < fence AND fence <= ? + 2000 AND ? > " + SETTLED + "))";

    private final Connection connection;

    OlderVersionTicks(Connection connection) {
        this.connection = connection;
    }

    /** Fires one tick of the job whose lock is {@code lock}: true if this instance ran it ({@code run} called). */
    boolean fire(String lock, long tick, Runnable run) throws SQLException {
        String row = "tick@" + lock;
        if (claimed(row, tick)) {
            return false;
        }
        if (query("SELECT GET_LOCK(?, 30)", lock) != 1) {
            throw new IllegalStateException("the older instance waited 30 s for the lock of " + lock);
        }
        try {
            if (!claim(row, tick)) {
                return false;
            }
            run.run();
            return true;
        } finally {
            query("SELECT RELEASE_LOCK(?)", lock);
        }
    }

    private boolean claimed(String row, long tick) throws SQLException {
        try (PreparedStatement statement = connection
                .prepareStatement("SELECT NOT " + CLAIMABLE + " FROM mysql_lock WHERE name = ?")) {
            for (int i = 1; i <= 4; i++) {
                statement.setLong(i, tick);
            }
            statement.setString(5, row);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    private boolean claim(String row, long tick) throws SQLException {
        try (PreparedStatement seed = connection.prepareStatement("INSERT IGNORE INTO mysql_lock (name, fence, acquired_at)"
                + " SELECT ?, COALESCE(MAX(fence), 0), UTC_TIMESTAMP(6) FROM mysql_lock WHERE name = '~fence-floor'"
                + " LOCK IN SHARE MODE")) {
            seed.setString(1, row);
            seed.executeUpdate();
        }
        try (PreparedStatement statement = connection.prepareStatement("UPDATE mysql_lock"
                + " SET owner = IF(fence < ?, CONCAT(fence, ' ', ?), CONCAT(?, ' ', fence)), fence = GREATEST(fence, ?),"
                + " completed_at = UTC_TIMESTAMP(6) WHERE name = ? AND " + CLAIMABLE)) {
            for (int i = 1; i <= 9; i++) {
                if (i == 5) {
                    statement.setString(i, row);
                } else {
                    statement.setLong(i, tick);
                }
            }
            return statement.executeUpdate() == 1;
        }
    }

    private long query(String sql, String lock) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, lock);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
