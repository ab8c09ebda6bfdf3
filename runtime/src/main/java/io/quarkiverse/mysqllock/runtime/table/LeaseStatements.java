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
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlWork;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;

/**
 * The LEASE engine's statements on its leases: take, renew, give up, one at a time or in batches (its administration
 * queries are {@link LeaseAdministration}'s, its clock check {@link ServerClock}'s); the writes are retried on a
 * deadlock.
 * <p>
 * No take compares two servers' clocks. A take replaces a free row (no owner: given up, or new), a row its taker saw
 * unchanged for a whole lease on its own clock ({@link Expected}: a compare-and-set on the row's version, its owner
 * token and {@code expires_at}), a row of this instance's own that ended here, or a lease whose end lies further in
 * the past than max-clock-skew by the clock of the server that takes it (its holder long dead: the only clock
 * assumption left). {@code expires_at} is still written, by the server's clock, for that rule, for operators and for
 * older versions.
 */
public final class LeaseStatements {

    private static final Logger LOG = Logger.getLogger(LeaseStatements.class);
    private static final int DEADLOCK_RETRIES = 10;
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;
    /** How many times a release refused by a row lock is tried again, each waiting for the row. */
    private static final int ROW_LOCKED_GIVE_UP_ATTEMPTS = 3;

    private final ConnectionSource connections;
    private final LockTable table;
    private final String take;

    /** quarkus.mysql-lock.lease.max-clock-skew, in microseconds: a lease ended longer ago than this is long dead. */
    private final long longDeadMicros;
    private final String version;

    public LeaseStatements(ConnectionSource connections, LockTable table, long longDeadMicros) {
        this.connections = connections;
        this.table = table;
        this.longDeadMicros = longDeadMicros;
        String t = table.name();
        this.take = takeStatement(t);
        this.version = "SELECT owner, " + EXPIRES_MICROS + ", expires_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND,"
                + " expires_at <= UTC_TIMESTAMP(6) FROM " + t + " WHERE name = ?";
    }

    /** {@code expires_at} as a number, for an exact comparison: microseconds since the epoch. */
    private static final String EXPIRES_MICROS = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at)";

    /** The rule of a row any take may replace (parameter: max-clock-skew in microseconds): free, or long dead. */
    private static final String FREE_OR_LONG_DEAD = "owner IS NULL OR expires_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND";

    /**
     * The acquiring statement (parameters: owner token, lease in microseconds, name, max-clock-skew in microseconds):
     * takes a free or long-dead lease and returns the new fence through {@code LAST_INSERT_ID}.
     */
    public static String takeStatement(String table) {
        return takeStatement(table, null);
    }

    /** The same, also taking the row {@code expected} describes (its parameters follow). */
    private static String takeStatement(String table, Expected expected) {
        return "UPDATE " + table + " SET owner = ?, acquired_at = UTC_TIMESTAMP(6),"
                + " expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, fence = LAST_INSERT_ID(fence + 1)"
                + " WHERE name = ? AND (" + FREE_OR_LONG_DEAD + (expected == null ? "" : " OR " + expected.clause())
                + ")";
    }

    /**
     * An owned row a take may replace besides a free or long-dead one, by what its taker knows of it; the owner tokens
     * are unique per acquisition, so a token matches one row only.
     */
    public record Expected(Kind kind, List<String> owners, long expiresMicros) {

        public enum Kind {
            /** The row as it was seen unchanged for a whole lease: its owner token and its end, exactly. */
            VERSION,
            /** A lease of this instance's that ended here (its holder was told): its tokens, whatever its end. */
            OWN,
            /** A lease of a version that did not record its length: once it expired by this server's clock. */
            LEGACY
        }

        /** The condition on the expected row; {@link #bind} sets its parameters. */
        String clause() {
            return switch (kind) {
                case VERSION -> "(owner = ? AND " + EXPIRES_MICROS + " = ?)";
                case OWN -> "owner IN (?" + ", ?".repeat(owners.size() - 1) + ")";
                case LEGACY -> "(owner = ? AND expires_at <= UTC_TIMESTAMP(6))";
            };
        }

        public static Expected version(String owner, long expiresMicros) {
            return new Expected(Kind.VERSION, List.of(owner), expiresMicros);
        }

        public static Expected own(List<String> tokens) {
            return new Expected(Kind.OWN, List.copyOf(tokens), 0);
        }

        public static Expected legacy(String owner) {
            return new Expected(Kind.LEGACY, List.of(owner), 0);
        }

        /** Sets this one's parameters from {@code index}: the next index. */
        int bind(PreparedStatement statement, int index) throws SQLException {
            switch (kind) {
                case VERSION -> {
                    statement.setString(index++, owners.get(0));
                    statement.setLong(index++, expiresMicros);
                }
                case OWN -> {
                    for (String owner : owners) {
                        statement.setString(index++, owner);
                    }
                }
                case LEGACY -> statement.setString(index++, owners.get(0));
            }
            return index;
        }
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
    public long take(Connection raw, ServerVersion server, String serverName, String ownerToken, long leaseNanos,
            Expected expected) throws SQLException {
        return table.withTable(raw,
                () -> retryingDeadlocks(() -> takeOnce(raw, server, serverName, ownerToken, leaseNanos, expected)));
    }

    /**
     * One attempt that waits for no row lock on any server (MySQL: the session's wait at its 1 s minimum), for a
     * connection shared by the instance's threads, where one held row must delay no other lease: the new fence, or 0.
     */
    public long takeWithoutRowWaits(Connection raw, ServerVersion server, String serverName, String ownerToken,
            long leaseNanos, Expected expected) throws SQLException {
        return table.withTable(raw, () -> Statements.withoutRowWaits(raw, server,
                prefix -> retryingDeadlocks(() -> takeOnce(raw, prefix, serverName, ownerToken, leaseNanos, expected))));
    }

    private long takeOnce(Connection raw, ServerVersion server, String serverName, String ownerToken, long leaseNanos,
            Expected expected) throws SQLException {
        return takeOnce(raw, server.setStatement() ? Statements.NO_ROW_WAIT : "", serverName, ownerToken, leaseNanos,
                expected);
    }

    private long takeOnce(Connection raw, String prefix, String serverName, String ownerToken, long leaseNanos,
            Expected expected) throws SQLException {
        String sql = expected == null ? take : takeStatement(table.name(), expected);
        PreparedStatement statement = connections.statements().prepare(raw, prefix + sql, true);
        statement.setString(1, ownerToken);
        statement.setLong(2, TimeUnit.NANOSECONDS.toMicros(leaseNanos));
        statement.setString(3, serverName);
        statement.setLong(4, longDeadMicros);
        if (expected != null) {
            expected.bind(statement, 5);
        }
        return LockTable.updateReturningFence(statement, serverName);
    }

    /** A lease row as a taker sees it: its version (owner token, end), and whether any take may replace it now. */
    public record RowVersion(String owner, long expiresMicros, boolean longDead, boolean expiredHere) {
        /** Free, or long dead: any take replaces it. */
        public boolean free() {
            return owner == null || longDead;
        }
    }

    /** The name's row as it is now (a consistent read, locking nothing), or null if it has none. */
    public RowVersion version(Connection raw, String serverName) throws SQLException {
        PreparedStatement statement = connections.statements().prepare(raw, version);
        statement.setLong(1, longDeadMicros);
        statement.setString(2, serverName);
        try (ResultSet rs = statement.executeQuery()) {
            return rs.next() ? new RowVersion(rs.getString(1), rs.getLong(2), rs.getBoolean(3), rs.getBoolean(4)) : null;
        }
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

    /** A take asked for in a batch: the name's row, the acquisition's owner token, the lease's length. */
    public record TakeRequest(String serverName, String ownerToken, long leaseMicros) {
    }

    /** A row as a batch reads it back: its owner token (null when free), its fence, its end (for observers). */
    public record RowState(String owner, long fence, long expiresMicros) {
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
        Statements.withoutRowWaits(raw, server, prefix -> {
            PreparedStatement statement = connections.statements().prepare(raw, prefix + takeMany(takes));
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
            statement.setLong(index, longDeadMicros);
            return statement.executeUpdate();
        });
        return rowStates(raw, takes.stream().map(TakeRequest::serverName).toList());
    }

    /**
     * The batch's take: each row free or long dead. A take that may replace an owned row (observed expiry) goes alone:
     * its condition would make the batch's text depend on the mix of its takes, one prepared statement per mix.
     */
    private String takeMany(List<TakeRequest> takes) {
        int count = takes.size();
        StringBuilder sql = new StringBuilder("UPDATE ").append(table.name()).append(" SET owner = CASE name");
        for (int i = 0; i < count; i++) {
            sql.append(" WHEN ? THEN ?");
        }
        sql.append(" END, acquired_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL (CASE name");
        for (int i = 0; i < count; i++) {
            sql.append(" WHEN ? THEN ?");
        }
        sql.append(" END) MICROSECOND, fence = fence + 1");
        appendIn(sql.append(" WHERE name IN ("), count);
        return sql.append(" AND (").append(FREE_OR_LONG_DEAD).append(')').toString();
    }

    /** The rows of these names, by name; a name without a row is missing. */
    public Map<String, RowState> rowStates(Connection raw, List<String> serverNames) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT name, owner, fence, " + EXPIRES_MICROS + " FROM ")
                .append(table.name());
        appendIn(sql.append(" WHERE name IN ("), serverNames.size());
        PreparedStatement statement = connections.statements().prepare(raw, sql.toString());
        for (int i = 0; i < serverNames.size(); i++) {
            statement.setString(i + 1, serverNames.get(i));
        }
        Map<String, RowState> rows = new HashMap<>();
        try (ResultSet rs = statement.executeQuery()) {
            while (rs.next()) {
                rows.put(rs.getString(1), new RowState(rs.getString(2), rs.getLong(3), rs.getLong(4)));
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
        return Statements.withoutRowWaits(raw, server, prefix -> giveUp(raw, prefix, lease));
    }

    private int giveUp(Connection raw, String prefix, OwnedLease lease) throws SQLException {
        return retryingDeadlocks(() -> giveUpRows(raw, prefix, List.of(lease.serverName()), lease.ownerTokens()));
    }

    /**
     * Gives several leases up in one statement, waiting for no row lock (error 1205 at once): how many it gave up, each
     * still ours until now (owner tokens are unique per acquisition). Fewer than asked means some were not ours any
     * more; which ones, only each lease's own statement can tell. Not retried on a deadlock: it runs in the caller's
     * transaction, which a deadlock rolls back whole.
     */
    public int giveUpMany(Connection raw, ServerVersion server, List<? extends OwnedLease> leases) throws SQLException {
        return Statements.withoutRowWaits(raw, server,
                prefix -> giveUpRows(raw, prefix, leases.stream().map(OwnedLease::serverName).toList(),
                        leases.stream().flatMap(lease -> lease.ownerTokens().stream()).toList()));
    }

    /** Gives up whatever these takes of a failed batch took: how many they had. */
    public int giveUpTakes(Connection raw, List<TakeRequest> takes) throws SQLException {
        return giveUpTakes(raw, "", takes);
    }

    /** The same, waiting for no row lock (error 1205 at once), for the connection the instance's batches share. */
    public int giveUpTakesWithoutRowWaits(Connection raw, ServerVersion server, List<TakeRequest> takes)
            throws SQLException {
        return Statements.withoutRowWaits(raw, server, prefix -> giveUpTakes(raw, prefix, takes));
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
     * Makes the leases among these that are still their owners' end {@code lengthNanos} from now, in one statement: how
     * many rows it renewed. Whether a lease looks expired by this server's clock does not matter: no one takes a lease
     * by that (only once they saw it unchanged for a whole lease, or when it is long dead), and a renewal changes the
     * row's version, so a taker that saw the former one takes nothing.
     */
    public int renew(Connection raw, String prefix, List<? extends OwnedLease> leases, long lengthNanos)
            throws SQLException {
        long micros = TimeUnit.NANOSECONDS.toMicros(lengthNanos);
        return retryingDeadlocks(() -> renewStatement(raw, prefix, leases, micros));
    }

    private int renewStatement(Connection raw, String prefix, List<? extends OwnedLease> leases, long micros)
            throws SQLException {
        StringBuilder sql = new StringBuilder(prefix).append("UPDATE ").append(table.name())
                // Never the same end twice: a server clock that stands still or stepped back must still change the
                // version, or a watcher that saw the former one would take a lease its holder renews.
                .append(" SET expires_at = GREATEST(UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,")
                .append(" expires_at + INTERVAL 1 MICROSECOND)");
        // Owner tokens are unique per acquisition, so a row matches both lists only for its own lease.
        appendIn(sql.append(" WHERE name IN ("), leases.size());
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

    /**
     * Extends a capped lease ({@code LockHandle.extend}): its end {@code lengthNanos} from now, its owner token a new one
     * that records this length ({@link OwnerTokens#next}), in place of whichever of its tokens the row has: 1 if it was
     * still ours.
     */
    public int extend(Connection raw, String prefix, OwnedLease lease, long lengthNanos) throws SQLException {
        List<String> tokens = lease.ownerTokens();
        // The new token is one the row never had (OwnerTokens.next): a new version whatever the end written, even on a
        // server whose clock stands still.
        StringBuilder sql = new StringBuilder(prefix).append("UPDATE ").append(table.name())
                .append(" SET owner = ?, expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE name = ?");
        appendIn(sql.append(" AND owner IN ("), tokens.size());
        return retryingDeadlocks(() -> {
            try (PreparedStatement statement = raw.prepareStatement(sql.toString())) {
                int index = 1;
                statement.setString(index++, lease.ownerToken());
                statement.setLong(index++, TimeUnit.NANOSECONDS.toMicros(lengthNanos));
                statement.setString(index++, lease.serverName());
                for (String token : tokens) {
                    statement.setString(index++, token);
                }
                return statement.executeUpdate();
            }
        });
    }

    private static void appendIn(StringBuilder sql, int count) {
        for (int i = 0; i < count; i++) {
            sql.append(i == 0 ? "?" : ", ?");
        }
        sql.append(')');
    }

    /**
     * The owners of some leases' rows, by server name, read to find out which leases a renewal did not renew, and why.
     * A name without a row is missing; a free row's owner is null.
     */
    public Map<String, String> owners(Connection raw, List<? extends OwnedLease> leases) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT name, owner FROM ").append(table.name());
        appendIn(sql.append(" WHERE name IN ("), leases.size());
        Map<String, String> owners = new HashMap<>();
        try (PreparedStatement statement = raw.prepareStatement(sql.toString())) {
            for (int i = 0; i < leases.size(); i++) {
                statement.setString(i + 1, leases.get(i).serverName());
            }
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    owners.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return owners;
    }

}
