package io.quarkiverse.mysqllock.runtime.table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/**
 * The fleet's reserved rows in the lock table, and every statement on them: the record {@code ~engine} (with the
 * namespace: {@code ~engine:<namespace>}) and the membership rows {@code ~live~<hex>} ({@code fleet.EngineAgreement}). The
 * statements run in the caller's transaction; which rows they lock, and how, is the agreement's rule.
 * <p>
 * A membership row's {@code fence} column holds its instance's leader window in microseconds (two NAMED keepalive
 * intervals: how long after its session ended a NAMED leader of it may still say it leads), negative where the instance
 * is configured for instant hand-over; 0 in rows of versions that did not record it. A new strict term waits for the
 * largest window of the live members, and a fleet hands leadership over instantly only while every live member is
 * configured so: a fleet whose instances run with different settings (a rolling change of them) never has two leaders.
 */
public final class FleetRows {

    /** Between the engine and the identity in a membership row's owner: {@code <ENGINE> <identity>#<token>}. */
    public static final String MODE_PREFIX_SEPARATOR = " ";

    private final String table;
    private final String recordName;
    private final String memberPrefix;
    private final String memberPattern;
    private final String lockNamePattern;
    private final String lockNameLowerPattern;
    private final String selectMembers;
    /** quarkus.mysql-lock.lease.max-clock-skew, in microseconds. */
    private final long longDeadMicros;

    /**
     * @param table the lock table's name
     * @param namespace {@code quarkus.mysql-lock.namespace}, or null: fleets of different namespaces agree separately
     * @param longDeadMicros {@code lease.max-clock-skew}: a membership row is reused only once free or long dead
     */
    public FleetRows(String table, String namespace, long longDeadMicros) {
        this.table = table;
        this.longDeadMicros = longDeadMicros;
        String scope = namespace == null ? "" : ":" + namespace;
        this.recordName = "~engine" + scope;
        this.memberPrefix = "~live" + scope + "~";
        this.memberPattern = escapeLike(memberPrefix) + "%";
        // The lock names of the namespace: as sent, and hashed (whose readable prefix is lower-cased).
        this.lockNamePattern = namespace == null ? null : escapeLike(namespace + ":") + "%";
        this.lockNameLowerPattern = namespace == null ? null
                : escapeLike(namespace.toLowerCase(Locale.ROOT) + ":") + "%";
        this.selectMembers = "SELECT name, owner, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at),"
                + " TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at) FROM " + table;
    }

    /** A membership row; the identity is its owner without the engine. */
    public record Member(String name, LockMode mode, String owner, long remainingMicros, long expiresMicros) {
        public String identity() {
            int space = owner.indexOf(MODE_PREFIX_SEPARATOR);
            return space < 0 ? owner : owner.substring(space + 1);
        }
    }

    // --- the record ---

    /** The record's owner, its row locked until the decision commits; the row is created first if there is none. */
    public String lockRecord(Connection raw) throws SQLException {
        for (int attempt = 1;; attempt++) {
            try (PreparedStatement statement = raw
                    .prepareStatement("SELECT owner FROM " + table + " WHERE name = ? FOR UPDATE")) {
                statement.setString(1, recordName);
                try (ResultSet rs = statement.executeQuery()) {
                    if (rs.next()) {
                        return rs.getString(1);
                    }
                }
            }
            try {
                // a plain INSERT, not INSERT IGNORE: that one would hold a shared lock on a row another decision created
                update(raw, "INSERT INTO " + table + " (name, fence) VALUES (?, 0)", recordName);
                return null;
            } catch (SQLException e) {
                if (!SqlErrors.isDuplicateKey(e) || attempt >= 3) {
                    throw e;
                }
            }
        }
    }

    /** The record's owner, read without a lock, or null. */
    public String readRecord(Connection raw) throws SQLException {
        try (PreparedStatement statement = raw.prepareStatement("SELECT owner FROM " + table + " WHERE name = ?")) {
            statement.setString(1, recordName);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    /** Records the fleet's engine, who chose it and why ({@code owner}), and when. */
    public void writeRecord(Connection raw, String owner) throws SQLException {
        try (PreparedStatement statement = raw.prepareStatement("UPDATE " + table
                + " SET owner = ?, acquired_at = UTC_TIMESTAMP(6) WHERE name = ?")) {
            statement.setString(1, owner);
            statement.setString(2, recordName);
            statement.executeUpdate();
        }
    }

    // --- the members ---

    /**
     * The members, with those that look expired read again with a lock (a current read): a renewal that committed after
     * this transaction's snapshot must not pass for an expiry. Live rows are not locked.
     */
    public List<Member> confirmExpired(Connection raw, List<Member> members) throws SQLException {
        List<String> expired = members.stream().filter(m -> m.remainingMicros() <= 0).map(Member::name).toList();
        if (expired.isEmpty()) {
            return members;
        }
        StringBuilder sql = new StringBuilder(selectMembers).append(" WHERE name IN (");
        for (int i = 0; i < expired.size(); i++) {
            sql.append(i == 0 ? "?" : ", ?");
        }
        List<Member> current = new ArrayList<>(members.stream().filter(m -> m.remainingMicros() > 0).toList());
        try (PreparedStatement statement = raw.prepareStatement(sql.append(") FOR UPDATE").toString())) {
            for (int i = 0; i < expired.size(); i++) {
                statement.setString(i + 1, expired.get(i));
            }
            readMembers(statement, current);
        }
        return current;
    }

    /** Every membership row of this namespace, as this transaction sees it. */
    public List<Member> members(Connection raw) throws SQLException {
        List<Member> members = new ArrayList<>();
        try (PreparedStatement statement = raw.prepareStatement(selectMembers + " WHERE name LIKE ? ESCAPE '!'")) {
            statement.setString(1, memberPattern);
            readMembers(statement, members);
        }
        return members;
    }

    private static void readMembers(PreparedStatement statement, List<Member> members) throws SQLException {
        try (ResultSet rs = statement.executeQuery()) {
            while (rs.next()) {
                String owner = rs.getString(2);
                LockMode mode = modeOf(owner);
                members.add(new Member(rs.getString(1), mode, owner, mode == null ? 0 : rs.getLong(3), rs.getLong(4)));
            }
        }
    }

    /** How many leases of this namespace have not expired. */
    public long unexpiredLeases(Connection raw) throws SQLException {
        String sql = "SELECT COUNT(*) FROM " + table + " WHERE name NOT LIKE '~%' AND owner IS NOT NULL"
                + " AND expires_at > UTC_TIMESTAMP(6)" + (lockNamePattern == null ? ""
                        : " AND (name LIKE ? ESCAPE '!' OR name LIKE ? ESCAPE '!')");
        try (PreparedStatement statement = raw.prepareStatement(sql)) {
            if (lockNamePattern != null) {
                statement.setString(1, lockNamePattern);
                statement.setString(2, lockNameLowerPattern);
            }
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * Takes over a membership row that was left (free) or is long dead (ended longer ago than max-clock-skew by this
     * server's clock: a server clock ahead sees live members' rows as ended, and must not take them) if there is one,
     * so rows do not pile up; else adds one.
     *
     * @param leaderWindowMicros the instance's leader window, kept in the row's {@code fence} (negative: instant hand-over)
     */
    public String register(Connection raw, List<Member> members, String owner, long ttlNanos, long leaderWindowMicros)
            throws SQLException {
        long ttlMicros = TimeUnit.NANOSECONDS.toMicros(ttlNanos);
        for (Member member : members) {
            if (member.mode() == null || member.remainingMicros() < -longDeadMicros) {
                try (PreparedStatement statement = raw.prepareStatement("UPDATE " + table + " SET owner = ?,"
                        + " acquired_at = UTC_TIMESTAMP(6), expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,"
                        + " fence = ? WHERE name = ? AND (owner IS NULL"
                        + " OR expires_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)")) {
                    statement.setString(1, owner);
                    statement.setLong(2, ttlMicros);
                    statement.setLong(3, leaderWindowMicros);
                    statement.setString(4, member.name());
                    statement.setLong(5, longDeadMicros);
                    if (statement.executeUpdate() == 1) {
                        return member.name();
                    }
                }
            }
        }
        String name = memberPrefix + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        try (PreparedStatement statement = raw.prepareStatement("INSERT INTO " + table + " (name, owner, acquired_at,"
                + " expires_at, fence) VALUES (?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ?)")) {
            statement.setString(1, name);
            statement.setString(2, owner);
            statement.setLong(3, ttlMicros);
            statement.setLong(4, leaderWindowMicros);
            statement.executeUpdate();
        }
        return name;
    }

    /**
     * The leader windows of the live NAMED members.
     *
     * @param largestMicros the largest window: how long a new strict term must wait after its grant for any former leader
     *        of the fleet to have stopped saying it leads (0 if none recorded one)
     * @param allInstant whether every live member is configured for instant hand-over
     */
    public record LeaderWindows(long largestMicros, boolean allInstant) {
    }

    public LeaderWindows leaderWindows(Connection raw) throws SQLException {
        try (PreparedStatement statement = raw.prepareStatement("SELECT COALESCE(MAX(ABS(fence)), 0),"
                + " COALESCE(MAX(fence), 0) FROM " + table
                + " WHERE name LIKE ? ESCAPE '!' AND owner LIKE 'NAMED %' AND expires_at > UTC_TIMESTAMP(6)")) {
            statement.setString(1, memberPattern);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return new LeaderWindows(rs.getLong(1), rs.getLong(2) < 0);
            }
        }
    }

    /** Extends a membership; false if it had expired (or was taken over): it must register again. */
    public boolean renew(Connection raw, String prefix, String memberName, String memberOwner, long ttlNanos)
            throws SQLException {
        // acquired_at: when it was last confirmed, in the clock of the server that confirmed it; a server ahead of the
        // others shows in it (the LEASE engine's clock check)
        String sql = prefix + "UPDATE " + table + " SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,"
                + " acquired_at = UTC_TIMESTAMP(6) WHERE name = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(6)";
        try (PreparedStatement statement = raw.prepareStatement(sql)) {
            statement.setLong(1, TimeUnit.NANOSECONDS.toMicros(ttlNanos));
            statement.setString(2, memberName);
            statement.setString(3, memberOwner);
            return statement.executeUpdate() == 1;
        }
    }

    /** Ends a membership (at shutdown). */
    public void leave(Connection raw, String memberName, String memberOwner) throws SQLException {
        try (PreparedStatement statement = raw.prepareStatement("UPDATE " + table
                + " SET owner = NULL, expires_at = '1970-01-01 00:00:00' WHERE name = ? AND owner = ?")) {
            statement.setString(1, memberName);
            statement.setString(2, memberOwner);
            statement.executeUpdate();
        }
    }

    private static void update(Connection raw, String sql, String name) throws SQLException {
        try (PreparedStatement statement = raw.prepareStatement(sql)) {
            statement.setString(1, name);
            statement.executeUpdate();
        }
    }

    /** LIKE with '!' as the escape: the namespace may hold '_'. */
    private static String escapeLike(String literal) {
        return literal.replace("!", "!!").replace("_", "!_").replace("%", "!%");
    }

    /** The engine a membership row or the record names, or null. */
    public static LockMode modeOf(String owner) {
        if (owner == null) {
            return null;
        }
        int space = owner.indexOf(MODE_PREFIX_SEPARATOR);
        String mode = space < 0 ? owner : owner.substring(0, space);
        return "NAMED".equals(mode) ? LockMode.NAMED : "LEASE".equals(mode) ? LockMode.LEASE : null;
    }
}
