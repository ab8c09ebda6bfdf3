package io.quarkiverse.mysqllock.test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * A primary and a replica, two embedded MariaDB servers with GTID replication, that can fail over the way an operator
 * or an orchestrator does it: the primary dies, the replica applies what it received and becomes the primary, and a new
 * replica is attached to it. The replica reaches the primary through a {@link TcpProxy} (the replication link), so the
 * link can be stalled first: what the primary commits meanwhile does not reach the replica.
 * <p>
 * {@link Durability#ASYNC}: the primary acknowledges commits without waiting for the replica, so a failover loses
 * what the replica had not received. {@link Durability#SEMISYNC}: lossless semi-synchronous replication
 * ({@code AFTER_SYNC}, no time-out to asynchronous): a commit is acknowledged only once the replica has it.
 */
public final class ReplicatedServers implements AutoCloseable {

    public enum Durability {
        ASYNC,
        SEMISYNC
    }

    private final Durability durability;
    /** How far ahead of the primary's clock each replica's runs (libfaketime); zero for real clocks. */
    private final Duration replicaClockOffset;
    private int lastServerId;
    private TestDatabase primary;
    private TestDatabase replica;
    private TcpProxy link;

    private ReplicatedServers(Durability durability, Duration replicaClockOffset) {
        this.durability = durability;
        this.replicaClockOffset = replicaClockOffset;
    }

    /** Starts a primary and a replica, and returns once the replica is connected. */
    public static ReplicatedServers start(Durability durability) {
        return start(durability, Duration.ZERO);
    }

    /**
     * The same with every replica's clock (and so a promoted one's) {@code replicaClockOffset} ahead of the first
     * primary's: a failover to a server whose clock disagrees.
     */
    public static ReplicatedServers start(Durability durability, Duration replicaClockOffset) {
        ReplicatedServers servers = new ReplicatedServers(durability, replicaClockOffset);
        try {
            servers.primary = servers.newServer(Duration.ZERO);
            servers.attachReplica();
            return servers;
        } catch (RuntimeException e) {
            servers.close();
            throw e;
        }
    }

    public Durability durability() {
        return durability;
    }

    public TestDatabase primary() {
        return primary;
    }

    /** The current replica, or null between a failover and {@link #attachReplica()}. */
    public TestDatabase replica() {
        return replica;
    }

    /** Stops the replication link: the replica stops receiving, the primary goes on (or waits, semi-synchronous). */
    public void stallLink() {
        link.stall();
    }

    /**
     * The primary dies (SIGKILL) and the replica becomes the primary: it applies everything it received (its relay
     * log), stops replicating and accepts writes. The old primary is discarded. There is no replica afterwards until
     * {@link #attachReplica()}.
     */
    public TestDatabase failOver() {
        TestDatabase old = primary;
        old.crash();
        link.close();
        try (Connection connection = replica.connect(); Statement statement = connection.createStatement()) {
            statement.execute("STOP SLAVE IO_THREAD");
            // RESET SLAVE ALL deletes the relay log: every transaction received must be applied first.
            long[] applied = { -1 };
            Await.until("the replica to apply its relay log", Duration.ofSeconds(60), () -> {
                // idle at the end of its relay log in two polls in a row, at the same position
                long position = relayLogApplied(connection);
                boolean done = position >= 0 && position == applied[0];
                applied[0] = position;
                return done;
            });
            statement.execute("STOP SLAVE");
            statement.execute("RESET SLAVE ALL");
            if (durability == Durability.SEMISYNC) {
                // Lossless from the first commit: with no replica attached yet, commits wait for one.
                statement.execute("SET GLOBAL rpl_semi_sync_master_enabled = ON");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Could not promote the replica", e);
        }
        primary = replica;
        replica = null;
        link = null;
        old.discard();
        return primary;
    }

    /**
     * Starts a new server, gives it a copy of the primary's data as of one point of the primary's binary log, lets it
     * replicate from that point on, and waits until it caught up. Provisioning by copy, as an operator does it with a
     * backup, keeps attaching a replica as fast after hours of history as at the start (replaying the primary's
     * binary log from its first transaction took longer with every failover: 6 s at the first, 59 s at the eleventh).
     */
    public TestDatabase attachReplica() {
        TestDatabase server = newServer(replicaClockOffset);
        link = TcpProxy.start("replication", primary.port());
        try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
            String from = copyData(primary, server);
            statement.execute("SET GLOBAL gtid_slave_pos = '" + from + "'");
            statement.execute("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=" + link.port()
                    + ", MASTER_USER='" + primary.user() + "', MASTER_PASSWORD='" + primary.password()
                    + "', MASTER_SSL=0, MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1, MASTER_USE_GTID=slave_pos");
            statement.execute("START SLAVE");
        } catch (SQLException e) {
            server.discard();
            throw new IllegalStateException("Could not attach a replica", e);
        }
        replica = server;
        if (durability == Durability.SEMISYNC) {
            primary.execute("SET GLOBAL rpl_semi_sync_master_enabled = ON");
            Await.until("the semi-synchronous replica", Duration.ofSeconds(60),
                    () -> status(primary, "Rpl_semi_sync_master_clients").equals("1")
                            && status(primary, "Rpl_semi_sync_master_status").equals("ON"));
        }
        String position = variable(primary, "gtid_binlog_pos");
        long caughtUp = server.queryLong("SELECT MASTER_GTID_WAIT(?, 60)", position);
        if (caughtUp != 0) {
            throw new IllegalStateException("The new replica did not reach " + position + " in 60 s: "
                    + describe(server));
        }
        return server;
    }

    @Override
    public void close() {
        if (link != null) {
            link.close();
        }
        if (replica != null) {
            replica.discard();
        }
        if (primary != null) {
            primary.discard();
        }
    }

    private TestDatabase newServer(Duration clockOffset) {
        List<String> args = new ArrayList<>(List.of("--server-id=" + ++lastServerId, "--log-bin=mysql-bin",
                "--binlog-format=ROW", "--log-slave-updates", "--gtid-strict-mode=OFF"));
        if (durability == Durability.SEMISYNC) {
            // enabled on a primary once it has a replica (see attachReplica): a server starting alone would wait
            args.addAll(List.of("--rpl-semi-sync-slave-enabled=ON", "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
                    "--rpl-semi-sync-master-timeout=" + Integer.MAX_VALUE, "--rpl-semi-sync-master-wait-no-slave=ON"));
        }
        return TestDatabase.startEmbedded(clockOffset, args.toArray(String[]::new));
    }

    /**
     * Copies every table of every user schema of {@code source} (structure and rows, not views, triggers or routines)
     * into {@code target}, from one consistent snapshot, and returns the GTID position of that snapshot: replicating
     * from it applies exactly the transactions the copy does not contain. Commits waiting for a semi-synchronous
     * acknowledgement are not in the snapshot (they are not committed in the engine yet) and come after the position.
     * The copy is kept out of the target's binary log, which thus holds only replicated transactions.
     */
    private static String copyData(TestDatabase source, TestDatabase target) throws SQLException {
        try (Connection from = source.connect();
                Statement read = from.createStatement();
                Connection to = target.connect();
                Statement write = to.createStatement()) {
            write.execute("SET SESSION sql_log_bin = 0");
            write.execute("SET SESSION foreign_key_checks = 0");
            from.setAutoCommit(false);
            read.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT");
            String position = binlogPosition(read);
            String schemas = "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA"
                    + " WHERE SCHEMA_NAME NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')";
            List<String> unsupported = query(read, "SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) FROM information_schema.VIEWS"
                    + " WHERE TABLE_SCHEMA IN (" + schemas + ") UNION ALL SELECT CONCAT(TRIGGER_SCHEMA, '.', TRIGGER_NAME)"
                    + " FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA IN (" + schemas + ")");
            if (!unsupported.isEmpty()) {
                throw new IllegalStateException("Cannot provision a replica of a server with views or triggers: "
                        + String.join(", ", unsupported));
            }
            for (String schema : query(read, schemas)) {
                write.execute("CREATE DATABASE IF NOT EXISTS `" + schema + "`");
                write.execute("USE `" + schema + "`");
                for (String table : query(read, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '"
                        + schema + "' AND TABLE_TYPE = 'BASE TABLE'")) {
                    copyTable(read, to, write, schema, table);
                }
            }
            from.commit();
            return position;
        }
    }

    /** The GTID position of the snapshot of the open {@code WITH CONSISTENT SNAPSHOT} transaction. */
    private static String binlogPosition(Statement snapshot) throws SQLException {
        String file = null;
        long offset = -1;
        try (ResultSet rs = snapshot.executeQuery("SHOW SESSION STATUS LIKE 'binlog_snapshot_%'")) {
            while (rs.next()) {
                if (rs.getString(1).equalsIgnoreCase("binlog_snapshot_file")) {
                    file = rs.getString(2);
                } else if (rs.getString(1).equalsIgnoreCase("binlog_snapshot_position")) {
                    offset = rs.getLong(2);
                }
            }
        }
        if (file == null || file.isEmpty() || offset < 0) {
            throw new IllegalStateException("The source server has no binary log snapshot position (--log-bin?)");
        }
        try (ResultSet rs = snapshot.executeQuery("SELECT BINLOG_GTID_POS('" + file + "', " + offset + ")")) {
            rs.next();
            String position = rs.getString(1);
            if (position == null) {
                throw new IllegalStateException("No GTID position for " + file + ":" + offset);
            }
            return position;
        }
    }

    private static void copyTable(Statement read, Connection to, Statement write, String schema, String table)
            throws SQLException {
        String name = "`" + schema + "`.`" + table + "`";
        try (ResultSet rs = read.executeQuery("SHOW CREATE TABLE " + name)) {
            rs.next();
            write.execute(rs.getString(2));
        }
        // Generated columns are computed again by the target.
        List<String> names = query(read, "SELECT CONCAT('`', COLUMN_NAME, '`') FROM information_schema.COLUMNS"
                + " WHERE TABLE_SCHEMA = '" + schema + "' AND TABLE_NAME = '" + table + "'"
                + " AND EXTRA NOT LIKE '%GENERATED%' ORDER BY ORDINAL_POSITION");
        String columns = String.join(", ", names);
        String insert = "INSERT INTO " + name + " (" + columns + ") VALUES ";
        String row = "(" + String.join(", ", Collections.nCopies(names.size(), "?")) + ")";
        List<Object[]> rows = new ArrayList<>();
        try (ResultSet rs = read.executeQuery("SELECT " + columns + " FROM " + name)) {
            while (rs.next()) {
                Object[] values = new Object[names.size()];
                for (int i = 0; i < values.length; i++) {
                    values[i] = rs.getObject(i + 1);
                }
                rows.add(values);
                if (rows.size() == 500) {
                    insertRows(to, insert, row, rows);
                }
            }
        }
        insertRows(to, insert, row, rows);
    }

    /** Inserts {@code rows} with one multi-row {@code INSERT} (nothing if there is none) and clears the list. */
    private static void insertRows(Connection to, String insert, String row, List<Object[]> rows) throws SQLException {
        if (rows.isEmpty()) {
            return;
        }
        String placeholders = String.join(", ", Collections.nCopies(rows.size(), row));
        try (PreparedStatement statement = to.prepareStatement(insert + placeholders)) {
            int index = 1;
            for (Object[] values : rows) {
                for (Object value : values) {
                    statement.setObject(index++, value);
                }
            }
            statement.executeUpdate();
        }
        rows.clear();
    }

    /** The values of a one-column query, in the order of its rows. */
    private static List<String> query(Statement statement, String sql) throws SQLException {
        List<String> values = new ArrayList<>();
        try (ResultSet rs = statement.executeQuery(sql)) {
            while (rs.next()) {
                values.add(rs.getString(1));
            }
        }
        return values;
    }

    /** The position the replica applied up to if it is idle at the end of its relay log, otherwise -1. */
    private static long relayLogApplied(Connection connection) {
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery("SHOW SLAVE STATUS")) {
            if (!rs.next()) {
                return 0;
            }
            // Not "executed up to the read position": the link may have delivered half a transaction, which is
            // never applied (STOP SLAVE rolls it back, as it must: the primary's commit of it is lost).
            String state = rs.getString("Slave_SQL_Running_State");
            return state != null && state.toLowerCase(Locale.ROOT).contains("read all relay log")
                    ? rs.getLong("Exec_Master_Log_Pos")
                    : -1;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String describe(TestDatabase server) {
        try (Connection connection = server.connect();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SHOW SLAVE STATUS")) {
            return rs.next() ? "IO " + rs.getString("Slave_IO_Running") + ", SQL " + rs.getString("Slave_SQL_Running")
                    + ", last error " + rs.getString("Last_Error") + rs.getString("Last_IO_Error") : "not a replica";
        } catch (SQLException e) {
            return e.getMessage();
        }
    }

    /** A {@code SHOW GLOBAL STATUS} value, or "" if the server has none of that name. */
    public static String status(TestDatabase server, String name) {
        return show(server, "SHOW GLOBAL STATUS LIKE '" + name + "'");
    }

    public static String variable(TestDatabase server, String name) {
        return show(server, "SHOW GLOBAL VARIABLES LIKE '" + name + "'");
    }

    private static String show(TestDatabase server, String sql) {
        try (Connection connection = server.connect();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(sql)) {
            return rs.next() ? rs.getString(2) : "";
        } catch (SQLException e) {
            throw new IllegalStateException("Failed: " + sql, e);
        }
    }
}
