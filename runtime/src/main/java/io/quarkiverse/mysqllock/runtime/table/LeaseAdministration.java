package io.quarkiverse.mysqllock.runtime.table;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/** The LEASE engine's administration of the lock table: who holds a name, every holder, a forced release. */
public final class LeaseAdministration {

    private final ConnectionSource connections;
    private final LockTable table;
    private final String current;

    public LeaseAdministration(ConnectionSource connections, LockTable table) {
        this.connections = connections;
        this.table = table;
        this.current = LeaseStatements.currentStatement(table.name());
    }

    /** The name's unexpired lease, whoever holds it. */
    public Optional<LockInfo> inspect(String name, String serverName) {
        return connections.query(name, "read the state of lock '" + name + "'", raw -> {
            try (PreparedStatement statement = raw.prepareStatement(current)) {
                statement.setString(1, serverName);
                try (ResultSet rs = statement.executeQuery()) {
                    return rs.next() ? Optional.of(new LockInfo(name, rs.getString(1), ServerClock.instant(rs.getTimestamp(2)),
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
                            ServerClock.instant(rs.getTimestamp(3)), rs.getLong(4), LockMode.LEASE)));
                }
            } catch (SQLException e) {
                if (!SqlErrors.isMissingTable(e)) {
                    throw e;
                }
            }
            return infos;
        });
    }

    /**
     * Ends the name's lease, whoever holds it: the owner token of the lease it ended, if there was one. Any owned row
     * counts, expired by this server's clock or not: its holder may still hold it (a lease is taken over only once seen
     * unrenewed for its whole length), and a free row is taken at once. The end matches the owner it read, so that the
     * answer names exactly the lease it ended, never one taken meanwhile.
     */
    public Optional<String> forceRelease(String name, String serverName) {
        return connections.query(name, "force-release lease '" + name + "'", raw -> {
            while (true) {
                String owner;
                try (PreparedStatement read = raw.prepareStatement("SELECT owner FROM " + table.name()
                        + " WHERE name = ? AND owner IS NOT NULL")) {
                    read.setString(1, serverName);
                    try (ResultSet rs = read.executeQuery()) {
                        if (!rs.next()) {
                            return Optional.<String> empty();
                        }
                        owner = rs.getString(1);
                    }
                }
                try (PreparedStatement end = raw.prepareStatement("UPDATE " + table.name() + " SET owner = NULL,"
                        + " expires_at = '1970-01-01 00:00:00' WHERE name = ? AND owner = ?")) {
                    end.setString(1, serverName);
                    end.setString(2, owner);
                    if (end.executeUpdate() == 1) {
                        return Optional.of(owner);
                    }
                }
                // given up or taken over between the two statements: look again
            }
        });
    }
}
