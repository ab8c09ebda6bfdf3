package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SessionSettings;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlWork;

/**
 * The LEASE engine's statements on its leases: take, renew, give up, one at a time or in batches (its administration
 * queries are {@link LeaseAdministration}'s, its clock check {@link ServerClock}'s). A lease lasts until {@code expires_at}, a
 * server time ({@code UTC_TIMESTAMP(6)}), never
 * the application's clock; the writes are retried on a deadlock.
 */
public final class LeaseStatements {

    private static final Logger LOG = Logger.getLogger("io.quarkiverse.mysqllock.runtime.lease.LeaseEngine");
    private static final int DEADLOCK_RETRIES = 10;
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;
    /** How many times a release refused by a row lock is tried again, each waiting for the row. */
    private static final int ROW_LOCKED_GIVE_UP_ATTEMPTS = 3;

    private final ConnectionSource connections;
    private final LockTable table;
    private final String take;
    private final String giveUp;
    private final String current;

    public LeaseStatements(ConnectionSource connections, LockTable table) {
        this.connections = connections;
        this.table = table;
        String t = table.name();
        this.take = takeStatement(t);
        this.giveUp = giveUpStatement(t);
        this.current = currentStatement(t);
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

    /** The name's unexpired lease (parameter: name): its owner, acquisition time and fence. */
    static String currentStatement(String table) {
        return "SELECT owner, acquired_at, fence FROM " + table + " WHERE name = ? AND expires_at > UTC_TIMESTAMP(6)";
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

    /**
     * One attempt that waits for no row lock on any server (MySQL: the session's wait at its 1 s minimum), for a
     * connection shared by the instance's threads, where one held row must delay no other lease: the new fence, or 0.
     */
    public long takeWithoutRowWaits(Connection raw, ServerVersion server, String serverName, String ownerToken,
            long leaseNanos) throws SQLException {
        return table.withTable(raw, () -> SessionSettings.withoutRowWaits(raw, server,
                prefix -> retryingDeadlocks(() -> takeOnce(raw, prefix, serverName, ownerToken, leaseNanos))));
    }

    private long takeOnce(Connection raw, ServerVersion server, String serverName, String ownerToken, long leaseNanos)
            throws SQLException {
        return takeOnce(raw, server.setStatement() ? SessionSettings.NO_ROW_WAIT : "", serverName, ownerToken, leaseNanos);
    }

    private long takeOnce(Connection raw, String prefix, String serverName, String ownerToken, long leaseNanos)
            throws SQLException {
        PreparedStatement statement = connections.statements().prepare(raw, prefix + take, true);
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

    /** A take asked for in a batch: the name's row, the acquisition's owner token, the lease's length. */
    public record TakeRequest(String serverName, String ownerToken, long leaseMicros) {
    }

    /** A row as a batch reads it back: its owner token (null when free) and its fence. */
    public record RowState(String owner, long fence) {
    }

    /**
     * Takes several free or expired leases in one statement, then reads their rows back in another: a take succeeded
     * where its row now names its owner token, and the fence is the row's. A name without a row is missing from the
     * answer. The take waits for no row lock: where any of the rows is locked, the statement fails (error 1205) and
     * none is taken. The names must be distinct. Not retried on a deadlock: it runs in the caller's transaction, which
     * a deadlock rolls back whole.
     */
    public Map<String, RowState> takeMany(Connection raw, ServerVersion server, List<TakeRequest> takes)
            throws SQLException {
        SessionSettings.withoutRowWaits(raw, server, prefix -> {
            PreparedStatement statement = connections.statements().prepare(raw, prefix + takeMany(takes.size()));
            int index = 1;
            for (TakeRequest take : takes) {
                statement.setString(index++, take.serverName());
                statement.setString(index++, take.ownerToken());
            }
            for (TakeRequest take : takes) {
                statement.setString(index++, take.serverName());
                statement.setLong(index++, take.leaseMicros());
            }
            for (TakeRequest take : takes) {
                statement.setString(index++, take.serverName());
            }
            return statement.executeUpdate();
        });
        return rowStates(raw, takes.stream().map(TakeRequest::serverName).toList());
    }

    private String takeMany(int count) {
        StringBuilder sql = new StringBuilder("UPDATE ").append(table.name()).append(" SET owner = CASE name");
        for (int i = 0; i < count; i++) {
            sql.append(" WHEN ? THEN ?");
        }
        sql.append(" END, acquired_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL (CASE name");
        for (int i = 0; i < count; i++) {
            sql.append(" WHEN ? THEN ?");
        }
        sql.append(" END) MICROSECOND, fence = fence + 1 WHERE expires_at <= UTC_TIMESTAMP(6)");
        appendIn(sql.append(" AND name IN ("), count);
        return sql.toString();
    }

    /** The rows of these names, by name; a name without a row is missing. */
    public Map<String, RowState> rowStates(Connection raw, List<String> serverNames) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT name, owner, fence FROM ").append(table.name());
        appendIn(sql.append(" WHERE name IN ("), serverNames.size());
        PreparedStatement statement = connections.statements().prepare(raw, sql.toString());
        for (int i = 0; i < serverNames.size(); i++) {
            statement.setString(i + 1, serverNames.get(i));
        }
        Map<String, RowState> rows = new HashMap<>();
        try (ResultSet rs = statement.executeQuery()) {
            while (rs.next()) {
                rows.put(rs.getString(1), new RowState(rs.getString(2), rs.getLong(3)));
            }
        }
        return rows;
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
            try {
                return connections.withStatements(lease.name(), raw -> giveUp(raw, lease));
            } catch (SQLException e) {
                if (SqlErrors.isLockWaitTimeout(e) || SqlErrors.isDeadlock(e)) {
                    // refused, nothing changed: the row is locked (a transaction reading the fence, a Galera node
                    // applying the others' commits); the lease is given up once the row is free, off this thread
                    giveUpOnceTheRowIsFree(lease, e);
                    return -1;
                }
                boolean readOnly = SqlErrors.isReadOnly(e);
                if (readOnly) {
                    connections.readOnlyFound("release of lease '" + lease.name() + "'");
                }
                if (!(readOnly || SqlErrors.isConnectionFailure(e)) || attempt >= MAX_STALE_CONNECTIONS) {
                    notReleased(lease, SqlErrors.describe(e));
                    return -1;
                }
            } catch (LockNotAcquiredException e) {
                notReleased(lease, e.getMessage());
                return -1;
            }
        }
    }

    /**
     * Gives the lease up off the caller's thread, each attempt waiting for the row as long as the server lets a statement
     * wait, a few times; if the row stays locked, the lease ends by itself when it expires. A late give-up is safe: the
     * owner token is unique to this acquisition, so it ends nothing but this lease.
     */
    private void giveUpOnceTheRowIsFree(OwnedLease lease, SQLException refusal) {
        LOG.debugf("The release of lease '%s' was refused (%s): it is tried again once the row is free", lease.name(),
                SqlErrors.describe(refusal));
        try {
            connections.executor().execute(() -> {
                SQLException last = refusal;
                for (int attempt = 1; attempt <= ROW_LOCKED_GIVE_UP_ATTEMPTS; attempt++) {
                    try {
                        connections.withStatements(lease.name(), raw -> giveUp(raw, lease));
                        return;
                    } catch (SQLException e) {
                        last = e;
                    } catch (RuntimeException e) {
                        notReleased(lease, e.toString());
                        return;
                    }
                }
                notReleased(lease, SqlErrors.describe(last));
            });
        } catch (RejectedExecutionException shutDown) {
            notReleased(lease, SqlErrors.describe(refusal));
        }
    }

    private static void notReleased(OwnedLease lease, String why) {
        LOG.warnf("Could not release lease '%s' (%s): it ends by itself when it expires", lease.name(), why);
    }

    /** Gives the lease up on this connection: 1 if it was still ours, 0 if not. */
    public int giveUp(Connection raw, OwnedLease lease) throws SQLException {
        return giveUp(raw, "", lease);
    }

    /**
     * The same, waiting for no row lock (error 1205 at once), for a connection shared by the instance's threads, where
     * one held row must delay no other lease.
     */
    public int giveUpWithoutRowWaits(Connection raw, ServerVersion server, OwnedLease lease) throws SQLException {
        return SessionSettings.withoutRowWaits(raw, server, prefix -> giveUp(raw, prefix, lease));
    }

    private int giveUp(Connection raw, String prefix, OwnedLease lease) throws SQLException {
        return retryingDeadlocks(() -> {
            PreparedStatement statement = connections.statements().prepare(raw, prefix + giveUp);
            statement.setString(1, lease.serverName());
            statement.setString(2, lease.ownerToken());
            return statement.executeUpdate();
        });
    }

    /**
     * Gives several leases up in one statement, waiting for no row lock (error 1205 at once): how many it gave up, each
     * still ours until now (owner tokens are unique per acquisition). Fewer than asked means some were not ours any
     * more; which ones, only each lease's own statement can tell. Not retried on a deadlock: it runs in the caller's
     * transaction, which a deadlock rolls back whole.
     */
    public int giveUpMany(Connection raw, ServerVersion server, List<? extends OwnedLease> leases) throws SQLException {
        return SessionSettings.withoutRowWaits(raw, server,
                prefix -> giveUpRows(raw, prefix, leases.stream().map(OwnedLease::serverName).toList(),
                        leases.stream().map(OwnedLease::ownerToken).toList()));
    }

    /** Gives up whatever these takes of a failed batch took: how many they had. */
    public int giveUpTakes(Connection raw, List<TakeRequest> takes) throws SQLException {
        return giveUpTakes(raw, "", takes);
    }

    /** The same, waiting for no row lock (error 1205 at once), for the connection the instance's batches share. */
    public int giveUpTakesWithoutRowWaits(Connection raw, ServerVersion server, List<TakeRequest> takes)
            throws SQLException {
        return SessionSettings.withoutRowWaits(raw, server, prefix -> giveUpTakes(raw, prefix, takes));
    }

    private int giveUpTakes(Connection raw, String prefix, List<TakeRequest> takes) throws SQLException {
        return retryingDeadlocks(() -> giveUpRows(raw, prefix, takes.stream().map(TakeRequest::serverName).toList(),
                takes.stream().map(TakeRequest::ownerToken).toList()));
    }

    private int giveUpRows(Connection raw, String prefix, List<String> serverNames, List<String> ownerTokens)
            throws SQLException {
        StringBuilder sql = new StringBuilder(prefix).append("UPDATE ").append(table.name())
                .append(" SET owner = NULL, expires_at = '1970-01-01 00:00:00'");
        // Owner tokens are unique per acquisition, so a row matches both lists only for its own lease.
        appendIn(sql.append(" WHERE name IN ("), serverNames.size());
        appendIn(sql.append(" AND owner IN ("), ownerTokens.size());
        PreparedStatement statement = connections.statements().prepare(raw, sql.toString());
        int index = 1;
        for (String serverName : serverNames) {
            statement.setString(index++, serverName);
        }
        for (String ownerToken : ownerTokens) {
            statement.setString(index++, ownerToken);
        }
        return statement.executeUpdate();
    }

    // --- renewal ---

    /**
     * Makes the unexpired leases among these end {@code lengthNanos} from now, in one statement: how many rows it
     * renewed.
     */
    public int renew(Connection raw, String prefix, List<? extends OwnedLease> leases, long lengthNanos)
            throws SQLException {
        long micros = TimeUnit.NANOSECONDS.toMicros(lengthNanos);
        return retryingDeadlocks(() -> renewStatement(raw, prefix, leases, micros));
    }

    private int renewStatement(Connection raw, String prefix, List<? extends OwnedLease> leases, long micros)
            throws SQLException {
        StringBuilder sql = new StringBuilder(prefix).append("UPDATE ").append(table.name())
                .append(" SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE expires_at > UTC_TIMESTAMP(6)");
        // Owner tokens are unique per acquisition, so a row matches both lists only for its own lease.
        appendIn(sql.append(" AND name IN ("), leases.size());
        appendIn(sql.append(" AND owner IN ("), leases.size());
        try (PreparedStatement statement = raw.prepareStatement(sql.toString())) {
            int index = 1;
            statement.setLong(index++, micros);
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

}
