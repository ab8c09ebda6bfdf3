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
        Reported reported = read(connection, mariaDb);
        for (String probe : reported.skipped()) {
            // A refusal is worth knowing; a table or variable this server does not have is not.
            if (probe.contains("(error 1146,") || probe.contains("(error 1193,") || probe.contains("(error 1064,")) {
                LOG.debugf("Replication detection: skipped %s", probe);
            } else {
                LOG.infof("Replication detection: skipped %s", probe);
            }
        }
        return assess(reported, mariaDb);
    }

    /**
     * What the server answered to each probe, as its statements return it: null where it refused the statement or has
     * no such variable, status or table (MariaDB has no Group Replication variables or tables, nor has MySQL without
     * the {@code group_replication} plugin; a plain MySQL user may not be allowed to read {@code performance_schema}).
     *
     * @param readOnly {@code @@read_only}
     * @param wsrepOn {@code @@wsrep_on} (MariaDB, Percona XtraDB Cluster)
     * @param slavesConnected status {@code Slaves_connected} (MariaDB)
     * @param semiSyncSourceClients status {@code Rpl_semi_sync_source_clients}
     * @param semiSyncMasterClients status {@code Rpl_semi_sync_master_clients}
     * @param binlogDumps replicas reading the binary log ({@code performance_schema.threads})
     * @param registeredReplicas rows of {@code SHOW REPLICAS} / {@code SHOW SLAVE HOSTS}
     * @param slaveRunning status {@code Slave_running}
     * @param groupMembersOnline ONLINE members in {@code performance_schema.replication_group_members}
     * @param channelState {@code MAX(SERVICE_STATE)} of {@code performance_schema.replication_connection_status}
     * @param logBin {@code @@log_bin}
     * @param groupSinglePrimaryMode {@code @@group_replication_single_primary_mode} (MySQL with the plugin)
     * @param groupName {@code @@group_replication_group_name} (MySQL with the plugin; null or empty without a group)
     * @param skipped the probes the server refused or does not support, with why
     */
    public record Reported(String readOnly, String wsrepOn, String slavesConnected, String semiSyncSourceClients,
            String semiSyncMasterClients, String binlogDumps, String registeredReplicas, String slaveRunning,
            String groupMembersOnline, String channelState, String logBin, String groupSinglePrimaryMode,
            String groupName, List<String> skipped) {
    }

    /** Asks the server every probe; never fails on one it refuses or does not have. */
    public static Reported read(Connection connection, boolean mariaDb) {
        List<String> skipped = new ArrayList<>();
        String readOnly = value(connection, "SELECT @@read_only", skipped);
        String wsrep = value(connection, "SELECT @@wsrep_on", skipped);
        String slaves = status(connection, "Slaves_connected", skipped);
        // Semi-synchronous replication's status is readable by every user, on MySQL too (both names of the variable).
        String sourceClients = status(connection, "Rpl_semi_sync_source_clients", skipped);
        String masterClients = status(connection, "Rpl_semi_sync_master_clients", skipped);
        String dumps = value(connection, "SELECT COUNT(*) FROM performance_schema.threads"
                + " WHERE PROCESSLIST_COMMAND IN ('Binlog Dump', 'Binlog Dump GTID')", skipped);
        String registered = rows(connection, mariaDb ? "SHOW SLAVE HOSTS" : "SHOW REPLICAS", skipped);
        String slaveRunning = status(connection, "Slave_running", skipped);
        String members = value(connection,
                "SELECT COUNT(*) FROM performance_schema.replication_group_members WHERE MEMBER_STATE = 'ONLINE'", skipped);
        String channels = value(connection,
                "SELECT MAX(SERVICE_STATE) FROM performance_schema.replication_connection_status", skipped);
        String logBin = value(connection, "SELECT @@log_bin", skipped);
        String[] group = groupVariables(connection, skipped);
        return new Reported(readOnly, wsrep, slaves, sourceClients, masterClients, dumps, registered, slaveRunning,
                members, channels, logBin, group == null ? null : group[0], group == null ? null : group[1],
                List.copyOf(skipped));
    }

    /** The topology the server's answers show: decided from the values alone, so that it can be tested on them. */
    public static Topology assess(Reported reported, boolean mariaDb) {
        List<String> signs = new ArrayList<>();
        boolean readOnly = "1".equals(reported.readOnly());
        boolean galera = isOn(reported.wsrepOn());
        if (galera) {
            signs.add("the server is a Galera cluster node (wsrep_on=ON)");
        }
        Optional<String> multiPrimary = multiPrimaryGroup(reported.groupSinglePrimaryMode(), reported.groupName(),
                reported.groupMembersOnline());
        multiPrimary.ifPresent(signs::add);
        if (positive(reported.slavesConnected())) {
            signs.add(reported.slavesConnected() + " replica(s) connected (Slaves_connected)");
        }
        if (positive(reported.semiSyncSourceClients())) {
            signs.add(reported.semiSyncSourceClients()
                    + " semi-synchronous replica(s) connected (Rpl_semi_sync_source_clients)");
        } else if (positive(reported.semiSyncMasterClients())) {
            signs.add(reported.semiSyncMasterClients()
                    + " semi-synchronous replica(s) connected (Rpl_semi_sync_master_clients)");
        }
        if (positive(reported.binlogDumps())) {
            signs.add(reported.binlogDumps() + " replica(s) reading the binary log (performance_schema.threads)");
        }
        if (positive(reported.registeredReplicas())) {
            signs.add(reported.registeredReplicas() + " replica(s) registered ("
                    + (mariaDb ? "SHOW SLAVE HOSTS" : "SHOW REPLICAS") + ")");
        }
        if ("ON".equalsIgnoreCase(reported.slaveRunning())) {
            signs.add("a replica thread is running on this server (Slave_running=ON)");
        }
        if (positive(reported.groupMembersOnline()) && multiPrimary.isEmpty()) {
            signs.add("group replication has " + reported.groupMembersOnline() + " online member(s)");
        }
        if ("ON".equalsIgnoreCase(reported.channelState())) {
            signs.add("a replication channel is running on this server");
        }
        String unseen = null;
        if (signs.isEmpty() && !mariaDb && reported.binlogDumps() == null && reported.registeredReplicas() == null
                && "1".equals(reported.logBin())) {
            unseen = "the server writes a binary log, and this user may not see whether replicas read it (SHOW REPLICAS"
                    + " needs REPLICATION SLAVE, performance_schema.threads needs SELECT on performance_schema)";
        }
        String reason = signs.isEmpty() ? "the server reports no replication" : String.join("; ", signs);
        return new Topology(!signs.isEmpty(), reason, readOnly, galera, multiPrimary.isPresent(), reported.skipped(),
                unseen);
    }

    /**
     * Whether the server is a member of a MySQL Group Replication group in multi-primary mode, where every member takes
     * writes and named locks are local to each, from what it reports: single-primary mode off, and a group named. The
     * members table is not needed (a plain user may not read it, and a member that is recovering, or whose group
     * replication is stopped now, is still not ONLINE there, yet may become so while the application runs); its count
     * only goes into the reason. A server whose group settings stay after it left its group for good is taken for a
     * member too: it gets LEASE, and keeps NAMED once {@code group_replication_group_name} is cleared.
     *
     * @param singlePrimaryMode {@code @@group_replication_single_primary_mode} as the server returns it ({@code 0},
     *        {@code 1}, {@code OFF}, {@code ON}), null where the server has no such variable (MariaDB, MySQL without the
     *        plugin)
     * @param groupName {@code @@group_replication_group_name}, null or empty without a group
     * @param onlineMembers the ONLINE members of {@code performance_schema.replication_group_members}, null if unread
     * @return why, for the start-up line, or empty
     */
    public static Optional<String> multiPrimaryGroup(String singlePrimaryMode, String groupName, String onlineMembers) {
        if (singlePrimaryMode == null || groupName == null || groupName.isBlank() || !isOff(singlePrimaryMode)) {
            return Optional.empty();
        }
        String members = onlineMembers == null ? "its members unread (performance_schema.replication_group_members)"
                : onlineMembers + " online member(s)";
        return Optional.of("the server is a member of a MySQL Group Replication group in multi-primary mode"
                + " (group_replication_single_primary_mode=OFF, group " + groupName.strip() + ", " + members
                + "), where named locks are local to each member");
    }

    private static boolean isOn(String value) {
        return "1".equals(value) || "ON".equalsIgnoreCase(value);
    }

    private static boolean isOff(String value) {
        String v = value.strip();
        return "0".equals(v) || "OFF".equalsIgnoreCase(v) || "FALSE".equalsIgnoreCase(v);
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
            return Optional.of(new Topology(true, "quarkus.mysql-lock.replication=true", false, false, false, List.of(),
                    null));
        }
        if (urlProblem.isPresent()) {
            return Optional.of(new Topology(true, "named locks are unsafe on this datasource: " + urlProblem.get(), false,
                    false, false, List.of(), null));
        }
        if (replication.isPresent()) {
            return Optional.of(new Topology(false, "quarkus.mysql-lock.replication=false (detection skipped)", false,
                    false, false, List.of(), null));
        }
        return Optional.empty();
    }

    /**
     * {@code quarkus.mysql-lock.replication=false}: the configured answer about replication, with the facts that make
     * named locks impossible whatever is configured, read without the rest of the detection: a Galera node
     * ({@code @@wsrep_on}), a member of a multi-primary Group Replication group (its two variables) and a read-only
     * server ({@code @@read_only}).
     */
    public static Topology withoutReplicationDetection(Topology configured, Connection connection) {
        List<String> skipped = new ArrayList<>();
        String readOnly = value(connection, "SELECT @@read_only", skipped);
        String wsrep = value(connection, "SELECT @@wsrep_on", skipped);
        String[] group = groupVariables(connection, skipped);
        return withoutReplicationDetection(configured, readOnly, wsrep, group == null ? null : group[0],
                group == null ? null : group[1]);
    }

    /** {@link #withoutReplicationDetection(Topology, Connection)} from the values the server reported. */
    public static Topology withoutReplicationDetection(Topology configured, String readOnly, String wsrepOn,
            String groupSinglePrimaryMode, String groupName) {
        boolean galera = isOn(wsrepOn);
        Optional<String> multiPrimary = multiPrimaryGroup(groupSinglePrimaryMode, groupName, null);
        String reason = galera
                ? "the server is a Galera cluster node (wsrep_on=ON), where named locks are not shared between nodes;"
                        + " quarkus.mysql-lock.replication=false does not change that"
                : multiPrimary.isPresent()
                        ? multiPrimary.get() + "; quarkus.mysql-lock.replication=false does not change that"
                        : configured.reason();
        return new Topology(false, reason, "1".equals(readOnly), galera, multiPrimary.isPresent(), List.of(), null);
    }

    /**
     * {@code @@group_replication_single_primary_mode} and {@code @@group_replication_group_name}, in one statement:
     * readable by every user where the {@code group_replication} plugin is loaded; unknown elsewhere (error 1193 on
     * MariaDB and on MySQL without the plugin), then skipped and null, as {@code @@wsrep_on} is on MySQL.
     */
    private static String[] groupVariables(Connection connection, List<String> skipped) {
        return values(connection, "SELECT @@group_replication_single_primary_mode, @@group_replication_group_name", 2,
                skipped);
    }

    /** The first row's first {@code columns} values, or null if the server refused the statement (or has no row). */
    private static String[] values(Connection connection, String sql, int columns, List<String> skipped) {
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            if (!rs.next()) {
                return null;
            }
            String[] row = new String[columns];
            for (int i = 0; i < columns; i++) {
                row[i] = rs.getString(i + 1);
            }
            return row;
        } catch (SQLException e) {
            skipped.add("'" + sql + "': " + SqlErrors.describe(e));
            return null;
        }
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
