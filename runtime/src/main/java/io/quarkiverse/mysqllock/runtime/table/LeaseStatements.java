package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SessionSettings;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlWork;

/**
 * Every statement of the LEASE engine on the lock table, and only here: take, renew, give up, the administration
 * queries and the clock check. A lease lasts until {@code expires_at}, a server time ({@code UTC_TIMESTAMP(6)}), never
 * the application's clock; the writes are retried on a deadlock.
 */
public final class LeaseStatements {

    private static final Logger LOG = Logger.getLogger("io.quarkiverse.mysqllock.runtime.lease.LeaseEngine");
    private static final int DEADLOCK_RETRIES = 10;
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;

    private final ConnectionSource connections;
    private final LockTable table;
    private final long ttlMicros;
    private final String take;
    private final String giveUp;
    private final String current;

    public LeaseStatements(ConnectionSource connections, LockTable table, long ttlNanos) {
        this.connections = connections;
        this.table = table;
        this.ttlMicros = TimeUnit.NANOSECONDS.toMicros(ttlNanos);
        String t = table.name();
        this.take = takeStatement(t);
        this.giveUp = giveUpStatement(t);
        this.current = "SELECT owner, acquired_at, fence FROM " + t + " WHERE name = ? AND expires_at > UTC_TIMESTAMP(6)";
    }

    /**
     * The acquiring statement (parameters: owner token, lease in microseconds, name): takes a free or expired lease and
     * returns the new fence through {@code LAST_INSERT_ID}.
     */
    public static String takeStatement(String table) {
        return "UPDATE " + table + " SET owner = ?, acquired_at = UTC_TIMESTAMP(6),"
                + " expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, fence = LAST_INSERT_ID(fence + 1)"
                + " WHERE name = ? AND expires_at <= UTC_TIMESTAMP(6)";
    }

    /** The releasing statement (parameters: name, owner token): only the owner's lease ends. */
    public static String giveUpStatement(String table) {
        return "UPDATE " + table + " SET owner = NULL, expires_at = '1970-01-01 00:00:00' WHERE name = ? AND owner = ?";
    }

    // --- take ---

    /**
     * One attempt, the table created first if it is missing: the new fence if the lease was free or expired, else 0.
     * On MariaDB it waits for no row lock (error 1205 at once), so that a transaction holding the row keeps no caller
     * past its wait.
     */
    public long take(Connection raw, ServerVersion server, String serverName, String ownerToken, long leaseNanos)
            throws SQLException {
        return table.withTable(raw,
                () -> retryingDeadlocks(() -> takeOnce(raw, server, serverName, ownerToken, leaseNanos)));
    }

    private long takeOnce(Connection raw, ServerVersion server, String serverName, String ownerToken, long leaseNanos)
            throws SQLException {
        PreparedStatement statement = connections.statements().prepare(raw, server.setStatement() ? SessionSettings.NO_ROW_WAIT + take : take,
                true);
        statement.setString(1, ownerToken);
        statement.setLong(2, TimeUnit.NANOSECONDS.toMicros(leaseNanos));
        statement.setString(3, serverName);
        return LockTable.updateReturningFence(statement, serverName);
    }

    /**
     * Makes sure the name's row exists, waiting for no row lock (an {@code INSERT} into a gap another statement locks
     * would wait for it, beyond the caller's wait): whether this call created it, or empty if the gap was locked.
     */
    public Optional<Boolean> seedWithoutRowWaits(Connection raw, ServerVersion server, String serverName)
            throws SQLException {
        try {
            return Optional.of(retryingDeadlocks(() -> table.seedWithoutRowWaits(raw, server, serverName)));
        } catch (SQLException e) {
            if (SqlErrors.isLockWaitTimeout(e)) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** The owner of the name's unexpired lease, or null. */
    public String holder(Connection raw, String serverName) throws SQLException {
        try (PreparedStatement statement = raw.prepareStatement(current)) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private static <T> T retryingDeadlocks(SqlWork<T> work) throws SQLException {
        for (int attempt = 1;; attempt++) {
            try {
                return work.run();
            } catch (SQLException e) {
                if (!SqlErrors.isDeadlock(e) || attempt >= DEADLOCK_RETRIES) {
                    throw e;
                }
                LOG.debugf("Deadlock on the lock table, retrying (%d)", attempt);
            }
        }
    }

    // --- give up ---

    /** Gives the lease up on the server: 1 if it was still ours, 0 if not, -1 if that could not be found out. */
    public int giveUp(OwnedLease lease) {
        for (int attempt = 1;; attempt++) {
            ConnectionSource.Borrowed borrowed = null;
            try {
                borrowed = connections.borrowForStatements(lease.name(), 0);
                Connection raw = borrowed.raw();
                int released = retryingDeadlocks(() -> {
                    PreparedStatement statement = connections.statements().prepare(raw, giveUp);
                    statement.setString(1, lease.serverName());
                    statement.setString(2, lease.ownerToken());
                    return statement.executeUpdate();
                });
                connections.giveBack(borrowed);
                return released;
            } catch (SQLException e) {
                if (borrowed != null) {
                    connections.discard(borrowed.pooled());
                }
                boolean readOnly = SqlErrors.isReadOnly(e);
                if (readOnly) {
                    connections.readOnlyFound("release of lease '" + lease.name() + "'");
                }
                if (!(readOnly || SqlErrors.isConnectionFailure(e)) || attempt >= MAX_STALE_CONNECTIONS) {
                    LOG.warnf("Could not release lease '%s' (%s): it ends by itself when it expires", lease.name(),
                            SqlErrors.describe(e));
                    return -1;
                }
            } catch (LockNotAcquiredException e) {
                LOG.warnf("Could not release lease '%s' (%s): it ends by itself when it expires", lease.name(),
                        e.getMessage());
                return -1;
            }
        }
    }

    // --- renewal ---

    /** Extends the unexpired leases among these by a ttl, in one statement: how many rows it renewed. */
    public int renew(Connection raw, String prefix, List<? extends OwnedLease> leases) throws SQLException {
        return retryingDeadlocks(() -> renewStatement(raw, prefix, leases));
    }

    private int renewStatement(Connection raw, String prefix, List<? extends OwnedLease> leases) throws SQLException {
        StringBuilder sql = new StringBuilder(prefix).append("UPDATE ").append(table.name())
                .append(" SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE expires_at > UTC_TIMESTAMP(6)");
        // Owner tokens are unique per acquisition, so a row matches both lists only for its own lease.
        appendIn(sql.append(" AND name IN ("), leases.size());
        appendIn(sql.append(" AND owner IN ("), leases.size());
        try (PreparedStatement statement = raw.prepareStatement(sql.toString())) {
            int index = 1;
            statement.setLong(index++, ttlMicros);
            for (OwnedLease lease : leases) {
                statement.setString(index++, lease.serverName());
            }
            for (OwnedLease lease : leases) {
                statement.setString(index++, lease.ownerToken());
            }
            return statement.executeUpdate();
        }
    }

    private static void appendIn(StringBuilder sql, int count) {
        for (int i = 0; i < count; i++) {
            sql.append(i == 0 ? "?" : ", ?");
        }
        sql.append(')');
    }

    /**
     * The rows of some leases, by server name: their owners, and whether they are unexpired. A name without a row has
     * neither.
     */
    public record Rows(Map<String, String> owners, Map<String, Boolean> valid) {
    }

    /** Reads the rows of leases a renewal did not all renew, to find out which, and why. */
    public Rows rows(Connection raw, List<? extends OwnedLease> leases) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT name, owner, expires_at > UTC_TIMESTAMP(6) FROM ")
                .append(table.name());
        appendIn(sql.append(" WHERE name IN ("), leases.size());
        Map<String, String> owners = new HashMap<>();
        Map<String, Boolean> valid = new HashMap<>();
        try (PreparedStatement statement = raw.prepareStatement(sql.toString())) {
            for (int i = 0; i < leases.size(); i++) {
                statement.setString(i + 1, leases.get(i).serverName());
            }
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    owners.put(rs.getString(1), rs.getString(2));
                    valid.put(rs.getString(1), rs.getBoolean(3));
                }
            }
        }
        return new Rows(owners, valid);
    }

    // --- administration ---

    /** The name's unexpired lease, whoever holds it. */
    public Optional<LockInfo> inspect(String name, String serverName) {
        return connections.query(name, "read the state of lock '" + name + "'", raw -> {
            try (PreparedStatement statement = raw.prepareStatement(current)) {
                statement.setString(1, serverName);
                try (ResultSet rs = statement.executeQuery()) {
                    return rs.next() ? Optional.of(new LockInfo(name, rs.getString(1), instant(rs.getTimestamp(2)),
                            rs.getLong(3), LockMode.LEASE)) : Optional.<LockInfo> empty();
                }
            } catch (SQLException e) {
                if (SqlErrors.isMissingTable(e)) {
                    return Optional.<LockInfo> empty();
                }
                throw e;
            }
        });
    }

    /**
     * Every unexpired lease, by server name, each as the row says (the owner token, the server's acquisition time) and
     * then passed through {@code asSeenHere}, as it is read.
     */
    public List<LockInfo> holders(UnaryOperator<LockInfo> asSeenHere) {
        return connections.query("(holders)", "list the lock holders", raw -> {
            List<LockInfo> infos = new ArrayList<>();
            try (PreparedStatement statement = raw.prepareStatement("SELECT name, owner, acquired_at, fence FROM "
                    + table.name() + " WHERE owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) AND name NOT LIKE '~%'"
                    + " ORDER BY name");
                    ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    infos.add(asSeenHere.apply(new LockInfo(rs.getString(1), rs.getString(2),
                            instant(rs.getTimestamp(3)), rs.getLong(4), LockMode.LEASE)));
                }
            } catch (SQLException e) {
                if (!SqlErrors.isMissingTable(e)) {
                    throw e;
                }
            }
            return infos;
        });
    }

    /** Ends the name's unexpired lease, whoever holds it: whether there was one. */
    public boolean forceRelease(String name, String serverName) {
        return connections.query(name, "force-release lease '" + name + "'", raw -> {
            try (PreparedStatement statement = raw.prepareStatement("UPDATE " + table.name() + " SET owner = NULL,"
                    + " expires_at = '1970-01-01 00:00:00' WHERE name = ? AND expires_at > UTC_TIMESTAMP(6)")) {
                statement.setString(1, serverName);
                return statement.executeUpdate() == 1;
            }
        });
    }

    // --- the clock check ---

    /** The server's clock in microseconds, and how many leases are held (0 before the table exists). */
    public long[] serverTimeAndLeases(Connection raw) throws SQLException {
        try (Statement statement = raw.createStatement(); ResultSet rs = statement.executeQuery(
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
        try (Statement statement = raw.createStatement(); ResultSet rs = statement.executeQuery(
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
    private static Instant instant(Timestamp timestamp) {
        return timestamp == null ? null : timestamp.toLocalDateTime().toInstant(ZoneOffset.UTC);
    }

    private static long micros(Timestamp timestamp) {
        return micros(instant(timestamp));
    }

    public static long micros(Instant instant) {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1000;
    }
}
