package io.quarkiverse.mysqllock.test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
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
    private int lastServerId;
    private TestDatabase primary;
    private TestDatabase replica;
    private TcpProxy link;

    private ReplicatedServers(Durability durability) {
        this.durability = durability;
    }

    /** Starts a primary and a replica, and returns once the replica is connected. */
    public static ReplicatedServers start(Durability durability) {
        ReplicatedServers servers = new ReplicatedServers(durability);
        try {
            servers.primary = servers.newServer();
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

    /** Starts a new server that replicates the primary from its first transaction, and waits until it caught up. */
    public TestDatabase attachReplica() {
        TestDatabase server = newServer();
        link = TcpProxy.start("replication", primary.port());
        try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
            // Its own schema creation is not part of the primary's history: the replica starts from an empty one.
            statement.execute("SET GLOBAL gtid_slave_pos = ''");
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

    private TestDatabase newServer() {
        List<String> args = new ArrayList<>(List.of("--server-id=" + ++lastServerId, "--log-bin=mysql-bin",
                "--binlog-format=ROW", "--log-slave-updates", "--gtid-strict-mode=OFF"));
        if (durability == Durability.SEMISYNC) {
            // enabled on a primary once it has a replica (see attachReplica): a server starting alone would wait
            args.addAll(List.of("--rpl-semi-sync-slave-enabled=ON", "--rpl-semi-sync-master-wait-point=AFTER_SYNC",
                    "--rpl-semi-sync-master-timeout=" + Integer.MAX_VALUE, "--rpl-semi-sync-master-wait-no-slave=ON"));
        }
        return TestDatabase.startEmbedded(args.toArray(String[]::new));
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
        try (Connection connection = server.connect(); Statement statement = connection.createStatement();
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
        try (Connection connection = server.connect(); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(sql)) {
            return rs.next() ? rs.getString(2) : "";
        } catch (SQLException e) {
            throw new IllegalStateException("Failed: " + sql, e);
        }
    }
}
