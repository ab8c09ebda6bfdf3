package io.quarkiverse.mysqllock.runtime.topology;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/**
 * Finds out whether the lock database is replicated, with only what a plain application user may read. A probe the
 * server refuses, or does not know, is logged and skipped, never fatal.
 */
public final class TopologyProbe {

    private static final Logger LOG = Logger.getLogger(TopologyProbe.class);

    private TopologyProbe() {
    }

    /**
     * Asks the server. On MySQL a plain user sees a primary's replicas only through semi-synchronous replication's
     * status, or where it was granted {@code SELECT} on {@code performance_schema} or {@code REPLICATION SLAVE}; a MySQL
     * server that writes a binary log and shows none of them is reported as {@link Topology#unseen()}.
     */
    public static Topology probe(Connection connection) throws SQLException {
        String version = value(connection, "SELECT VERSION()", new ArrayList<>());
        return probe(connection, version != null && version.toLowerCase(Locale.ROOT).contains("mariadb"));
    }

    /** @param mariaDb the server is MariaDB (or configured as one: {@code quarkus.mysql-lock.server-flavor}) */
    public static Topology probe(Connection connection, boolean mariaDb) throws SQLException {
        List<String> skipped = new ArrayList<>();
        List<String> signs = new ArrayList<>();
        boolean readOnly = "1".equals(value(connection, "SELECT @@read_only", skipped));
        String wsrep = value(connection, "SELECT @@wsrep_on", skipped);
        boolean galera = "1".equals(wsrep) || "ON".equalsIgnoreCase(wsrep);
        if (galera) {
            signs.add("the server is a Galera cluster node (wsrep_on=ON)");
        }
        String replicas = status(connection, "Slaves_connected", skipped);
        if (positive(replicas)) {
            signs.add(replicas + " replica(s) connected (Slaves_connected)");
        }
        // Semi-synchronous replication's status is readable by every user, on MySQL too (both names of the variable).
        for (String variable : new String[] { "Rpl_semi_sync_source_clients", "Rpl_semi_sync_master_clients" }) {
            String clients = status(connection, variable, skipped);
            if (positive(clients)) {
                signs.add(clients + " semi-synchronous replica(s) connected (" + variable + ")");
                break;
            }
        }
        String dumps = value(connection, "SELECT COUNT(*) FROM performance_schema.threads"
                + " WHERE PROCESSLIST_COMMAND IN ('Binlog Dump', 'Binlog Dump GTID')", skipped);
        if (positive(dumps)) {
            signs.add(dumps + " replica(s) reading the binary log (performance_schema.threads)");
        }
        String registered = rows(connection, mariaDb ? "SHOW SLAVE HOSTS" : "SHOW REPLICAS", skipped);
        if (positive(registered)) {
            signs.add(registered + " replica(s) registered (" + (mariaDb ? "SHOW SLAVE HOSTS" : "SHOW REPLICAS") + ")");
        }
        if ("ON".equalsIgnoreCase(status(connection, "Slave_running", skipped))) {
            signs.add("a replica thread is running on this server (Slave_running=ON)");
        }
        String members = value(connection,
                "SELECT COUNT(*) FROM performance_schema.replication_group_members WHERE MEMBER_STATE = 'ONLINE'", skipped);
        if (positive(members)) {
            signs.add("group replication has " + members + " online member(s)");
        }
        if ("ON".equalsIgnoreCase(value(connection,
                "SELECT MAX(SERVICE_STATE) FROM performance_schema.replication_connection_status", skipped))) {
            signs.add("a replication channel is running on this server");
        }
        for (String probe : skipped) {
            // A refusal is worth knowing; a table or variable this server does not have is not.
            if (probe.contains("(error 1146,") || probe.contains("(error 1193,") || probe.contains("(error 1064,")) {
                LOG.debugf("Replication detection: skipped %s", probe);
            } else {
                LOG.infof("Replication detection: skipped %s", probe);
            }
        }
        String unseen = null;
        if (signs.isEmpty() && !mariaDb && dumps == null && registered == null
                && "1".equals(value(connection, "SELECT @@log_bin", skipped))) {
            unseen = "the server writes a binary log, and this user may not see whether replicas read it (SHOW REPLICAS"
                    + " needs REPLICATION SLAVE, performance_schema.threads needs SELECT on performance_schema)";
        }
        String reason = signs.isEmpty() ? "the server reports no replication" : String.join("; ", signs);
        return new Topology(!signs.isEmpty(), reason, readOnly, galera, List.copyOf(skipped), unseen);
    }

    private static boolean positive(String count) {
        return count != null && !count.equals("0") && !count.isBlank();
    }

    /** How many rows a statement returns, or null if the server refused it. */
    private static String rows(Connection connection, String sql, List<String> skipped) {
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            int count = 0;
            while (rs.next()) {
                count++;
            }
            return String.valueOf(count);
        } catch (SQLException e) {
            skipped.add("'" + sql + "': " + SqlErrors.describe(e));
            return null;
        }
    }

    /** What the JDBC URL and the configuration alone say, without asking the server. */
    public static Optional<Topology> fromConfiguration(Optional<Boolean> replication, Optional<String> urlProblem) {
        if (replication.isPresent() && replication.get()) {
            return Optional.of(new Topology(true, "quarkus.mysql-lock.replication=true", false, false, List.of(), null));
        }
        if (urlProblem.isPresent()) {
            return Optional.of(new Topology(true, "named locks are unsafe on this datasource: " + urlProblem.get(), false,
                    false, List.of(), null));
        }
        if (replication.isPresent()) {
            return Optional.of(new Topology(false, "quarkus.mysql-lock.replication=false (detection skipped)", false,
                    false, List.of(), null));
        }
        return Optional.empty();
    }

    /**
     * {@code quarkus.mysql-lock.replication=false}: the configured answer about replication, with the two facts that
     * make named locks impossible whatever is configured, read without the rest of the detection: a Galera node
     * ({@code @@wsrep_on}) and a read-only server ({@code @@read_only}).
     */
    public static Topology withoutReplicationDetection(Topology configured, Connection connection) {
        List<String> skipped = new ArrayList<>();
        boolean readOnly = "1".equals(value(connection, "SELECT @@read_only", skipped));
        String wsrep = value(connection, "SELECT @@wsrep_on", skipped);
        boolean galera = "1".equals(wsrep) || "ON".equalsIgnoreCase(wsrep);
        String reason = galera
                ? "the server is a Galera cluster node (wsrep_on=ON), where named locks are not shared between nodes;"
                        + " quarkus.mysql-lock.replication=false does not change that"
                : configured.reason();
        return new Topology(false, reason, readOnly, galera, List.of(), null);
    }

    private static String value(Connection connection, String sql, List<String> skipped) {
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            skipped.add("'" + sql + "': " + SqlErrors.describe(e));
            return null;
        }
    }

    private static String status(Connection connection, String variable, List<String> skipped) {
        String sql = "SHOW GLOBAL STATUS LIKE '" + variable + "'";
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            return rs.next() ? rs.getString(2).toUpperCase(Locale.ROOT) : null;
        } catch (SQLException e) {
            skipped.add("'" + sql + "': " + SqlErrors.describe(e));
            return null;
        }
    }
}
