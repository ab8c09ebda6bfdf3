package io.quarkiverse.mysqllock.it;

import static io.quarkiverse.mysqllock.it.FaultEnvironment.WORKER_USER;
import static io.quarkiverse.mysqllock.it.FaultEnvironment.single;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.it.FaultEnvironment.Slot;
import io.quarkiverse.mysqllock.it.FaultSuite.Fault;
import io.quarkiverse.mysqllock.it.FaultSuite.Kind;
import io.quarkiverse.mysqllock.test.GaleraCluster;
import io.quarkiverse.mysqllock.test.ReplicatedServers.Durability;

/**
 * Injects one fault of a given {@link Kind} into a scenario's {@link FaultEnvironment} and returns it as a
 * {@link Fault}: whom it hit, and when it began and ended. Its victims (a worker, a leader, a session, a hot name's
 * row, a Galera node) and its lengths are drawn from the environment's seeded {@link Random}.
 * <p>
 * {@link FaultSuite} picks the kinds, in a shuffled rotation of the scenario's, and measures the recovery from each
 * fault; the faults it returns are what {@link FaultChecker} judges the history against.
 */
final class FaultInjector {

    /**
     * The settings a rolling restart gives its worker, one of each drawn at random; the worker keeps them until its next
     * rolling restart: the fleet runs with instances of different keepalive intervals, ttls, and leader hand-over.
     */
    static final List<Duration> ROLLING_KEEPALIVES = List.of(Duration.ofMillis(300), Duration.ofMillis(500),
            Duration.ofMillis(800));
    static final List<Duration> ROLLING_TTLS = List.of(Duration.ofMillis(1500), Duration.ofSeconds(2),
            Duration.ofSeconds(3));

    /** How long the replication link is stalled before the primary dies: what asynchronous failover loses. */
    static final Duration FAILOVER_STALL = Duration.ofSeconds(1);

    /** What is attacked; its database ({@code db}, {@code servers}, {@code cluster}) is read afresh: faults move it. */
    private final FaultEnvironment env;
    private final Scenario scenario;
    private final List<String> names;
    private final LockMode engine;
    /** The environment's, shared with the rotation of {@link FaultSuite}: one sequence of draws per seed. */
    private final Random random;
    private final List<Slot> slots;
    private final HttpClient http;

    FaultInjector(FaultEnvironment env) {
        this.env = env;
        this.scenario = env.scenario;
        this.names = env.names;
        this.engine = env.engine;
        this.random = env.random;
        this.slots = env.slots;
        this.http = env.http;
    }

    /**
     * How long a holder is stopped (paused, or its network stalled): past the ttl, so that its leases end; with a node's
     * clock ahead, also anywhere from a third of the ttl, where that node sees by its clock a lease end that its holder
     * still holds (a take-over then must wait for the lease seen unrenewed, not for the clock).
     */
    private long stopLength(long length) {
        return scenario.nodeAhead().isZero() ? length : random.nextLong(env.ttl().toMillis() / 3, length + 1);
    }

    /**
     * Injects a fault of the kind, waits for its end (a restarted worker ready, a healed node, a resumed process), and
     * returns it. The worker it may hit (a leader, in a leader scenario) is drawn first, whatever the kind.
     */
    Fault inject(Kind kind) throws Exception {
        Slot slot = scenario.leader() ? aLeader() : slots.get(random.nextInt(slots.size()));
        long length = (env.longestTtl().compareTo(env.slowestKeepalive()) > 0 ? env.longestTtl()
                : env.slowestKeepalive()).plusSeconds(1).toMillis();
        long start = FaultJournal.now();
        switch (kind) {
            case KILL_SESSION -> {
                return killSession(start);
            }
            case SIGKILL -> {
                String worker = slot.worker;
                long pid = slot.process.pid();
                slot.process.kill();
                long killed = FaultJournal.now();
                env.deaths.put(worker, killed);
                slot.start();
                slot.awaitReady();
                return new Fault(kind, worker, null, start, killed, "pid " + pid + ", restarted as " + slot.worker);
            }
            case FLEET_DOWN -> {
                return fleetDown(start);
            }
            case PAUSE -> {
                return lasting(kind, slot, stopLength(length), slot.process::pause, slot.process::resume);
            }
            case DB_RESTART -> {
                env.db.restart();
                // the embedded server starts without privilege checks: turn them on again
                env.db = env.db.withPrivilegeChecks();
                return new Fault(kind, null, null, start, FaultJournal.now(), "same port and data");
            }
            case BLACK_HOLE -> {
                return blackHole(start, length);
            }
            case ROW_LOCK -> {
                return rowLock(start, env.longestTtl().plusSeconds(1).toMillis());
            }
            case POOL_SATURATION -> {
                // one to three keepalive intervals
                long millis = env.options.keepalive().toMillis() * (1 + random.nextInt(3));
                String held = saturate(slot, millis);
                return new Fault(kind, slot.worker, null, start, FaultJournal.now(), slot.worker + " held " + held
                        + " connections of its pool for " + millis + " ms");
            }
            case ROLLING_RESTART -> {
                Map<String, String> settings = new LinkedHashMap<>();
                settings.put("quarkus.mysql-lock.named.keepalive-interval",
                        ROLLING_KEEPALIVES.get(random.nextInt(ROLLING_KEEPALIVES.size())).toMillis() + "ms");
                if (env.cluster == null) {
                    settings.put("quarkus.mysql-lock.lease.ttl",
                            ROLLING_TTLS.get(random.nextInt(ROLLING_TTLS.size())).toMillis() + "ms");
                }
                settings.put("quarkus.mysql-lock.named.instant-leader-hand-over", String.valueOf(random.nextBoolean()));
                String detail = slot.restartWith(settings);
                return new Fault(kind, slot.worker, null, start, FaultJournal.now(), detail);
            }
            case READ_ONLY -> {
                env.db.execute("SET GLOBAL read_only = 1");
                try {
                    Thread.sleep(length);
                } finally {
                    env.db.execute("SET GLOBAL read_only = 0");
                }
                return new Fault(kind, null, null, start, FaultJournal.now(), "SET GLOBAL read_only = 1 for " + length
                        + " ms");
            }
            case NETWORK_STALL -> {
                return lasting(kind, slot, stopLength(length), slot.proxy::stall, slot.proxy::resume);
            }
            case NETWORK_CUT -> {
                return lasting(kind, slot, 1000, slot.proxy::cut, slot.proxy::heal);
            }
            case FAILOVER -> {
                return failOver(start);
            }
            case NODE_KILL -> {
                // down a while (the others go on without it), then back: it rejoins by a state transfer
                GaleraCluster.Node node = slot.node;
                node.kill();
                long killed = FaultJournal.now();
                Thread.sleep(length);
                long restarting = FaultJournal.now();
                node.restart();
                return new Fault(kind, env.workersOn(node), null, start, FaultJournal.now(), "node " + node.number()
                        + " killed, down " + (restarting - killed) / 1000 + " ms, restarted and synced in "
                        + (FaultJournal.now() - restarting) / 1000 + " ms");
            }
            case NODE_PARTITION -> {
                GaleraCluster.Node node = slot.node;
                node.isolate();
                long isolated = FaultJournal.now();
                try {
                    Thread.sleep(length);
                    if (Boolean.getBoolean("faults.galera.dump")) {
                        for (GaleraCluster.Node other : env.cluster.nodes()) {
                            if (other != node) {
                                env.dumpNode(other);
                            }
                        }
                    }
                } finally {
                    node.heal();
                }
                return new Fault(kind, env.workersOn(node), null, start, FaultJournal.now(), "node " + node.number()
                        + " non-primary after " + (isolated - start) / 1000 + " ms, for " + length + " ms, then healed");
            }
            default -> throw new IllegalArgumentException(kind.toString());
        }
    }

    /**
     * Every worker SIGKILLed, none running for two to four seconds (the scheduling scenario's job's ticks pass with no
     * instance to fire them), then every one started again; the fault heals when all are ready.
     */
    private Fault fleetDown(long start) throws InterruptedException {
        List<String> killed = new ArrayList<>();
        for (Slot slot : slots) {
            killed.add(slot.worker);
            slot.process.kill();
            env.deaths.put(slot.worker, FaultJournal.now());
        }
        long down = 2000 + random.nextInt(2001);
        Thread.sleep(down);
        slots.forEach(Slot::start);
        slots.forEach(Slot::awaitReady);
        return new Fault(Kind.FLEET_DOWN, null, null, start, FaultJournal.now(), String.join(", ", killed)
                + " killed, down " + down + " ms, restarted as " + String.join(", ", slots.stream().map(s -> s.worker)
                        .toList()));
    }

    /** The application of a worker holds every connection of its pool for a while; how many it got. */
    private String saturate(Slot slot, long millis) throws IOException, InterruptedException {
        int port = Workers.httpPort(slot.process);
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/fault-worker/saturate?millis=" + millis)).POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofMillis(millis + 30_000)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException(slot.worker + " answered " + response.statusCode() + ": " + response.body());
        }
        Map<?, ?> answer = new ObjectMapper().readValue(response.body(), Map.class);
        return answer.get("held") + " of " + answer.get("pool");
    }

    /** A fault that hits one worker for a while: begin, wait, end. */
    private static Fault lasting(Kind kind, Slot slot, long millis, Runnable begin, Runnable end)
            throws InterruptedException {
        long start = FaultJournal.now();
        begin.run();
        try {
            Thread.sleep(millis);
        } finally {
            end.run();
        }
        return new Fault(kind, slot.worker, null, start, FaultJournal.now(), slot.worker);
    }

    /**
     * The replication link stalls, the primary dies while the workers go on writing, the replica is promoted, every
     * worker's proxy moves to it (a virtual IP or a router would), and a new replica is attached. Asynchronous: what the
     * primary acknowledged during the stall is gone. Semi-synchronous: the primary acknowledged nothing during the
     * stall, and the promoted server takes commits only once its own replica has attached.
     */
    private Fault failOver(long start) throws InterruptedException {
        env.servers.stallLink();
        Thread.sleep(FAILOVER_STALL.toMillis());
        long crashed = FaultJournal.now();
        env.db = env.servers.failOver();
        for (Slot slot : slots) {
            slot.proxy.retarget(env.db.port());
        }
        long promoted = FaultJournal.now();
        env.servers.attachReplica();
        long attached = FaultJournal.now();
        // The fault ends when the promoted server takes commits: at once (asynchronous), or once its own replica has
        // attached (semi-synchronous: a commit waits for a replica to have it).
        long healed = env.servers.durability() == Durability.SEMISYNC ? attached : promoted;
        return new Fault(Kind.FAILOVER, null, null, start, healed, "link stalled " + FAILOVER_STALL.toMillis()
                + " ms, primary killed, replica promoted in " + (promoted - crashed) / 1000 + " ms, new replica in "
                + (attached - promoted) / 1000 + " ms");
    }

    /**
     * One connection stops answering while the proxy keeps it open (what a half-open connection or a firewall that
     * drops packets looks like): the holder of a hot name's session (NAMED), or a random worker connection (LEASE).
     */
    private Fault blackHole(long start, long millis) throws SQLException, InterruptedException {
        Long session = victim(LockMode.NAMED);
        String where = null;
        if (session != null) {
            int port = clientPort(session);
            for (Slot slot : slots) {
                if (slot.proxy.stallConnection(port)) {
                    where = slot.worker;
                    try {
                        Thread.sleep(millis);
                    } finally {
                        slot.proxy.resume();
                    }
                    break;
                }
            }
        }
        return new Fault(Kind.BLACK_HOLE, where, null, start, FaultJournal.now(),
                where == null ? "no connection found" : "session " + session + " of " + where);
    }

    /** A worker that leads a role now, asked of each in a random order; a random one if none answers that it leads. */
    private Slot aLeader() {
        List<Slot> order = new ArrayList<>(slots);
        Collections.shuffle(order, random);
        for (Slot slot : order) {
            try {
                int port = Workers.httpPort(slot.process);
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + "/fault-worker/leads")).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200 && !new ObjectMapper().readValue(response.body(), List.class).isEmpty()) {
                    return slot;
                }
            } catch (IOException e) {
                // not answering: not the one to pick
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return order.get(0);
    }

    /** A transaction holds a hot name's lock-table row longer than a lease lasts, as a locking read of a fence would. */
    private Fault rowLock(long start, long millis) throws SQLException, InterruptedException {
        String name = names.get(random.nextInt(names.size()));
        try (Connection connection = env.db.connect(); Statement statement = connection.createStatement()) {
            connection.setAutoCommit(false);
            statement.executeQuery("SELECT fence FROM mysql_lock WHERE name = '" + name + "' FOR UPDATE").close();
            long locked = FaultJournal.now();
            Thread.sleep(millis);
            connection.commit();
            return new Fault(Kind.ROW_LOCK, null, name, locked, FaultJournal.now(), "row of " + name);
        }
    }

    /** A worker session: the holder of a random hot name (NAMED), or any (LEASE); null if none was found. */
    private Long victim(LockMode engineOfHolders) throws SQLException, InterruptedException {
        try (Connection connection = env.connectForChecks()) {
            if (engine == engineOfHolders) {
                for (int attempt = 0; attempt < 50; attempt++) {
                    Long holder = single(connection, "SELECT IS_USED_LOCK(?)",
                            names.get(random.nextInt(names.size())));
                    if (holder != null) {
                        return holder;
                    }
                    Thread.sleep(10);
                }
            }
            List<Long> sessions = new ArrayList<>();
            try (PreparedStatement list = connection.prepareStatement("SELECT ID FROM information_schema.PROCESSLIST"
                    + " WHERE USER = ? AND COMMAND <> 'Daemon'")) {
                list.setString(1, WORKER_USER);
                try (ResultSet rs = list.executeQuery()) {
                    while (rs.next()) {
                        sessions.add(rs.getLong(1));
                    }
                }
            }
            return sessions.isEmpty() ? null : sessions.get(random.nextInt(sessions.size()));
        }
    }

    /** The client port of a session (privilege checks on): the proxy's end of that connection. */
    private int clientPort(long session) throws SQLException {
        try (Connection connection = env.db.connect();
                PreparedStatement statement = connection
                        .prepareStatement("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = ?")) {
            statement.setLong(1, session);
            try (ResultSet rs = statement.executeQuery()) {
                String host = rs.next() ? rs.getString(1) : "";
                return host.indexOf(':') < 0 ? -1 : Integer.parseInt(host.substring(host.lastIndexOf(':') + 1));
            }
        }
    }

    /** KILLs the session that holds a hot name (NAMED), or a random worker session (LEASE: leases are not sessions). */
    private Fault killSession(long start) throws SQLException, InterruptedException {
        try (Connection connection = env.connectForChecks()) {
            if (engine == LockMode.NAMED) {
                for (int attempt = 0; attempt < 50; attempt++) {
                    String name = names.get(random.nextInt(names.size()));
                    long lookedUp = FaultJournal.now();
                    Long holder = single(connection, "SELECT IS_USED_LOCK(?)", name);
                    if (holder != null) {
                        try (PreparedStatement kill = connection.prepareStatement("KILL " + holder)) {
                            kill.execute();
                        } catch (SQLException e) {
                            continue; // it ended on its own in between
                        }
                        return new Fault(Kind.KILL_SESSION, null, name, lookedUp, FaultJournal.now(),
                                "holder of " + name + ", session " + holder);
                    }
                    Thread.sleep(10);
                }
            }
            List<Long> sessions = new ArrayList<>();
            try (PreparedStatement list = connection
                    .prepareStatement("SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()"
                            + " AND COMMAND <> 'Daemon' AND USER NOT IN ('system user', 'event_scheduler')");
                    ResultSet rs = list.executeQuery()) {
                while (rs.next()) {
                    sessions.add(rs.getLong(1));
                }
            }
            long victim = sessions.get(random.nextInt(sessions.size()));
            long at = FaultJournal.now();
            try (PreparedStatement kill = connection.prepareStatement("KILL " + victim)) {
                kill.execute();
            } catch (SQLException e) {
                // it ended on its own in between
            }
            return new Fault(Kind.KILL_SESSION, null, null, start, at, "worker session " + victim);
        }
    }
}
