package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.ZoneOffset;

import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/**
 * The statements of the LEASE engine's clock check: the server's clock, and how far the latest write of the lock table
 * lies in its future (a server whose clock is ahead).
 */
public final class ServerClock {

    private final LockTable table;

    public ServerClock(LockTable table) {
        this.table = table;
    }

    /** The server's clock in microseconds, and how many leases are held (0 before the table exists). */
    public long[] serverTimeAndLeases(Connection raw) throws SQLException {
        try (Statement statement = raw.createStatement();
                ResultSet rs = statement.executeQuery(
                        "SELECT UTC_TIMESTAMP(6), (SELECT COUNT(*) FROM " + table.name()
                                + " WHERE owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) AND name NOT LIKE '~%')")) {
            rs.next();
            return new long[] { micros(rs.getTimestamp(1)), rs.getLong(2) };
        } catch (SQLException e) {
            if (!SqlErrors.isMissingTable(e)) {
                throw e;
            }
            // created at the first acquisition
            try (Statement statement = raw.createStatement();
                    ResultSet rs = statement.executeQuery("SELECT UTC_TIMESTAMP(6)")) {
                rs.next();
                return new long[] { micros(rs.getTimestamp(1)), 0 };
            }
        }
    }

    /**
     * How far the latest take or membership confirmation in the lock table lies in the future of this server's clock:
     * a server whose clock is ahead writes them "in the future" of the others (replication delay only shortens it),
     * and every instance confirms its membership at each renewal. 0 or less when no server is seen ahead.
     * <p>
     * {@code UTC_TIMESTAMP(6)} is the time the statement began, and a statement can wait before it reads (a Galera
     * node's causality wait, a metadata lock): rows committed meanwhile lie after its start without any clock ahead
     * (a 10-minute Galera fault run with equal clocks had every worker report one). So the wait, from the statement's
     * start to a {@code SYSDATE(6)} taken once the table was read (the derived table is read first), is deducted.
     */
    public long clockAheadMicros(Connection raw) throws SQLException {
        try (Statement statement = raw.createStatement();
                ResultSet rs = statement.executeQuery(
                        "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), latest)"
                                + " - GREATEST(0, TIMESTAMPDIFF(MICROSECOND, NOW(6), SYSDATE(6)))"
                                + " FROM (SELECT MAX(acquired_at) AS latest FROM " + table.name() + ") AS taken")) {
            return rs.next() ? rs.getLong(1) : 0;
        } catch (SQLException e) {
            if (SqlErrors.isMissingTable(e)) {
                return 0; // created at the first acquisition
            }
            throw e;
        }
    }

    /** {@code DATETIME} columns hold UTC here: read them without any time-zone shift. */
    static Instant instant(Timestamp timestamp) {
        return timestamp == null ? null : timestamp.toLocalDateTime().toInstant(ZoneOffset.UTC);
    }

    private static long micros(Timestamp timestamp) {
        return micros(instant(timestamp));
    }

    public static long micros(Instant instant) {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1000;
    }
}
