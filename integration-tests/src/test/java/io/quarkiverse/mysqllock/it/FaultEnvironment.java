package io.quarkiverse.mysqllock.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.it.FaultSuite.Kind;
import io.quarkiverse.mysqllock.it.FaultSuite.Options;
import io.quarkiverse.mysqllock.runtime.engine.LockTimings;
import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.GaleraCluster;
import io.quarkiverse.mysqllock.test.ReplicatedServers;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The system one scenario runs on: its database (a single embedded server, a replicated pair or a Galera cluster), its
 * worker processes ({@link FaultWorker}, each behind a loopback {@link TcpProxy}: a {@link Slot}), the run's seeded
 * {@link Random}, and the timing bounds that follow from the scenario and the workers' settings.
 * <p>
 * {@link FaultSuite} builds one per scenario, starts and stops it, and reads its end state; {@link FaultInjector}
 * attacks it (and replaces {@link #db} when the database restarts or fails over). Both draw from the one
 * {@link #random}, so that a seed replays the same faults.
 */
final class FaultEnvironment {

    /** The workers' user on a single server: not SUPER, so that read_only binds it. */
    static final String WORKER_USER = "worker";
    /** statement-timeout of the workers: shorter than a fault, so that a black-holed connection is abandoned. */
    static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(1);

    /** The shortest lease ttl of the Galera scenarios: see {@link #ttl()}. */
    static final Duration GALERA_TTL = Duration.ofSeconds(5);

    final Options options;
    final Scenario scenario;
    /**
     * The hot names: the options', in a leader scenario their roles' locks ({@code <name>#leader}), in a semaphore
     * scenario the permits' locks of semaphore {@code hot}, one permit per name of the options.
     */
    final List<String> names;
    final LockMode engine;
    final Random random;
    final Path directory;
    /** When each dead worker (SIGKILLed, or killed as it would not stop) died. */
    final Map<String, Long> deaths = new LinkedHashMap<>();
    final List<Slot> slots = new ArrayList<>();
    final HttpClient http = HttpClient.newHttpClient();
    /** The server the workers use: the primary of {@link #servers} in a failover scenario. */
    TestDatabase db;
    ReplicatedServers servers;
    GaleraCluster cluster;

    /** A worker: its proxy, and the process behind it, started again (a new incarnation) after a SIGKILL or restart. */
    final class Slot {
        final int index;
        final TcpProxy proxy;
        int incarnation;
        String worker;
        AppProcess process;

        /** On a Galera cluster, the node the worker uses (each worker its own, in turn); null otherwise. */
        final GaleraCluster.Node node;
        /** The settings of its last rolling restart, over the run's; empty until then. */
        Map<String, String> rolled = Map.of();

        Slot(int index) {
            this.index = index;
            this.node = cluster == null ? null : cluster.nodes().get((index - 1) % cluster.nodes().size());
            this.proxy = TcpProxy.start("w" + index, node == null ? db.port() : node.port());
        }

        void start() {
            incarnation++;
            worker = "w" + index + "." + incarnation;
            Map<String, String> properties = new LinkedHashMap<>();
            properties.put("quarkus.http.port", "0");
            // each worker on its own node: the proxy rewrites that node's URL, not the first one's
            properties.put("quarkus.datasource.jdbc.url",
                    proxy.rewrite(node == null ? db.jdbcUrl() : node.database().jdbcUrl()));
            properties.put("quarkus.datasource.username", scenario.plainUser() ? WORKER_USER : db.user());
            properties.put("quarkus.datasource.password", scenario.plainUser() ? WORKER_USER : db.password());
            properties.put("quarkus.mysql-lock.statement-timeout", STATEMENT_TIMEOUT.toMillis() + "ms");
            properties.put("quarkus.mysql-lock.mode", engine.name().toLowerCase(Locale.ROOT));
            properties.put("quarkus.mysql-lock.instance-id", worker);
            properties.put("quarkus.mysql-lock.lease.ttl", ttl().toMillis() + "ms");
            properties.put("quarkus.mysql-lock.lease.max-clock-skew", scenario.maxClockSkew().toMillis() + "ms");
            properties.put("quarkus.mysql-lock.named.keepalive-interval", options.keepalive().toMillis() + "ms");
            properties.put("quarkus.log.console.format", "%d{HH:mm:ss.SSS} %-5p %s%e%n");
            // each worker's whole log beside its journal
            properties.put("quarkus.log.file.enable", "true");
            properties.put("quarkus.log.file.path", directory.resolve(worker + ".log").toAbsolutePath().toString());
            properties.put("quarkus.log.file.format", "%d{HH:mm:ss.SSS} %-5p [%t] %s%e%n");
            properties.put("quarkus.log.category.\"io.quarkiverse.mysqllock\".level", "DEBUG");
            properties.put("fault-worker.enabled", "true");
            properties.put("fault-worker.id", worker);
            properties.put("fault-worker.threads", String.valueOf(options.threads()));
            properties.put("fault-worker.workload", scenario.workload());
            if (scenario.transactions()) {
                properties.put("quarkus.mysql-lock.fenced-commit", String.valueOf(scenario.fencedCommit()));
            }
            properties.put("fault-worker.names", String.join(",", names));
            properties.put("fault-worker.journal", directory.resolve(worker + ".tsv").toAbsolutePath().toString());
            if (scenario.jobs()) {
                // a tick every second; the ticks no instance ran (every one down, or the database) are caught up
                properties.put("fault-worker.job-cron", "*/1 * * * * ?");
                String job = "quarkus.mysql-lock.jobs.\"" + FaultJobs.JOB + "\".";
                properties.put(job + "missed-ticks", "run-all");
                properties.put(job + "max-catch-up-runs", "1000");
                properties.put(job + "catch-up-window", "1h");
                properties.put("quarkus.mysql-lock.job-history.keep-runs", "1000000"); // the checker reads every row
            }
            properties.putAll(rolled);
            renewInterval(properties);
            process = AppProcess.start(worker, Workers.jar(), properties, options.log(),
                    line -> line.contains("ERROR") || line.contains("ready"));
        }

        /**
         * {@code -Dfaults.renew-interval}: a renewal interval of one's own, or {@code edge} for the longest the start
         * accepts with the worker's ttl (a rolling restart's too), half the ttl less the loss margin.
         */
        private void renewInterval(Map<String, String> properties) {
            String renew = System.getProperty("faults.renew-interval", "");
            if (renew.equals("edge")) {
                // written as "<millis>ms" by this class and by a rolling restart
                Duration ttl = Duration.ofMillis(
                        Long.parseLong(properties.get("quarkus.mysql-lock.lease.ttl").replace("ms", "")));
                renew = ttl.dividedBy(2).minusNanos(LockTimings.lossMargin(ttl.toNanos())).toMillis() + "ms";
            }
            if (!renew.isBlank()) {
                properties.put("quarkus.mysql-lock.lease.renew-interval", renew);
            }
        }

        void awaitReady() {
            process.awaitLine(line -> line.contains("Fault worker " + worker + " ready"), Duration.ofSeconds(90));
        }

        /**
         * Stops the worker as a deployment does (its loops end, then SIGTERM: it releases what it holds and leaves its
         * fleet) and starts it again with other settings; a worker that does not stop in time is killed, as a
         * deployment would, and counts as dead.
         */
        String restartWith(Map<String, String> settings) {
            String former = worker;
            try {
                stop(this);
                process.close();
            } catch (IOException | RuntimeException e) {
                process.kill();
                deaths.put(former, FaultJournal.now());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.kill();
                deaths.put(former, FaultJournal.now());
            }
            rolled = settings;
            start();
            awaitReady();
            return former + " restarted as " + worker + " with " + settings;
        }
    }

    FaultEnvironment(Options options, Scenario scenario) {
        this.options = options;
        this.scenario = scenario;
        this.names = scenario.leader() ? options.names().stream().map(name -> name + LeaderWorker.SUFFIX).toList()
                : scenario.semaphore() ? IntStream.range(0, options.names().size()).mapToObj(i -> "hot#permit-" + i).toList()
                        : scenario.jobs() ? List.of(FaultJobs.JOB) : options.names();
        this.engine = scenario.engine;
        this.random = new Random(options.seed() + scenario.ordinal());
        this.directory = options.out().resolve(scenario.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }

    /** Starts the scenario's database: a Galera cluster, a single server, or a replicated pair. */
    void startDatabase() {
        if (scenario.galera()) {
            cluster = GaleraCluster.start(3, Duration.ZERO, Duration.ZERO, scenario.nodeAhead());
            db = cluster.node(1).database();
        } else if (scenario.replication == null) {
            // privilege checks on, workers as a plain user: read_only binds them, and the server shows client ports
            db = TestDatabase.startEmbedded().withPrivilegeChecks();
        } else {
            servers = ReplicatedServers.start(scenario.replication);
            db = servers.primary();
        }
    }

    void prepareDatabase() {
        if (scenario.plainUser()) {
            db.execute("CREATE USER IF NOT EXISTS '" + WORKER_USER + "'@'%' IDENTIFIED BY '" + WORKER_USER + "'");
            // the jobs' history is trimmed by DELETEs
            db.execute("GRANT SELECT, INSERT, UPDATE, CREATE" + (scenario.jobs() ? ", DELETE" : "") + " ON "
                    + TestDatabase.SCHEMA + ".* TO '" + WORKER_USER + "'@'%'");
        }
        db.execute("CREATE TABLE resource (name VARCHAR(64) PRIMARY KEY, value BIGINT NOT NULL DEFAULT 0,"
                + " last_fence BIGINT NOT NULL DEFAULT 0)");
        db.execute("CREATE TABLE resource_write (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL,"
                + " fence BIGINT NOT NULL, section VARCHAR(100) NOT NULL, written_at BIGINT NOT NULL)");
        // the transaction workload's data: a counter per name, and a row per commit (TransactionChecker)
        db.execute("CREATE TABLE tx_counter (name VARCHAR(64) PRIMARY KEY, seq BIGINT NOT NULL DEFAULT 0,"
                + " value BIGINT NOT NULL DEFAULT 0)");
        db.execute("CREATE TABLE tx_commit (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL,"
                + " section VARCHAR(100) NOT NULL, token BIGINT NOT NULL, seen_seq BIGINT NOT NULL, seq BIGINT NOT NULL)");
        for (String name : names) {
            db.execute("INSERT INTO resource (name) VALUES ('" + name + "')");
            db.execute("INSERT INTO tx_counter (name) VALUES ('" + name + "')");
        }
    }

    /** Starts every worker, and waits until each is ready. */
    void startWorkers() {
        for (int i = 1; i <= options.workers(); i++) {
            slots.add(new Slot(i));
        }
        slots.forEach(Slot::start);
        slots.forEach(Slot::awaitReady);
    }

    /** Stops every worker left (resuming a paused one first), its proxy, and the database. */
    void close() {
        for (Slot slot : slots) {
            if (slot.process != null) {
                if (slot.process.isAlive()) {
                    slot.process.resume(); // a dead one (a worker that could not start) must not hide why the run ended
                }
                slot.process.close();
            }
            slot.proxy.close();
        }
        try {
            if (servers != null) {
                servers.close();
            } else if (cluster != null) {
                cluster.close();
            } else {
                db.stop();
            }
        } catch (RuntimeException e) {
            options.log().println("Stopping the database failed: " + e.getMessage());
        }
    }

    /** The scenario's kinds of fault, or those of them {@code -Dfaults.kinds} lists (to chase one kind's problem). */
    List<Kind> kinds() {
        String only = System.getProperty("faults.kinds", "");
        if (only.isBlank()) {
            return scenario.kinds();
        }
        List<String> wanted = Arrays.stream(only.split(",")).map(k -> k.trim().toUpperCase(Locale.ROOT).replace('-', '_'))
                .toList();
        return scenario.kinds().stream().filter(kind -> wanted.contains(kind.name())).toList();
    }

    /**
     * A connection for the controller's checks. On a Galera cluster its reads wait for every commit the cluster
     * acknowledged (a worker's last write may have been made on another node a moment before).
     */
    Connection connectForChecks() throws SQLException {
        Connection connection = db.connect();
        if (cluster != null) {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET SESSION wsrep_sync_wait = 1");
            } catch (SQLException e) {
                connection.close();
                throw e;
            }
        }
        return connection;
    }

    /**
     * The liveness bound: the keepalive or ttl plus 2 s; on a Galera cluster plus the time it takes the others to
     * evict an unreachable node, during which no node commits anything (what the cluster does, not the lock).
     */
    Duration recoveryBound() {
        Duration bound = (engine == LockMode.NAMED ? slowestKeepalive() : longestTtl()).plusSeconds(2);
        if (scenario == Scenario.LEADER_NAMED) {
            // strict leadership: a term begins the fleet's largest window, two keepalive intervals (and 100 ms), after
            // its grant
            return bound.plus(slowestKeepalive().multipliedBy(2)).plusMillis(100);
        }
        if (scenario.jobs()) {
            // a run comes with a tick: one a second, fired up to a second late
            return bound.plusSeconds(2);
        }
        if (cluster == null) {
            return bound;
        }
        return longestTtl().plusSeconds(2).plus(GaleraCluster.EVICTION);
    }

    /** The longest ttl a worker may run with: a rolling restart's, or the run's. */
    Duration longestTtl() {
        Duration longest = ttl();
        if (kinds().contains(Kind.ROLLING_RESTART) && cluster == null) {
            for (Duration rolled : FaultInjector.ROLLING_TTLS) {
                longest = rolled.compareTo(longest) > 0 ? rolled : longest;
            }
        }
        return longest;
    }

    /** The longest keepalive interval a worker may run with: a rolling restart's, or the run's. */
    Duration slowestKeepalive() {
        Duration slowest = options.keepalive();
        if (kinds().contains(Kind.ROLLING_RESTART)) {
            for (Duration rolled : FaultInjector.ROLLING_KEEPALIVES) {
                slowest = rolled.compareTo(slowest) > 0 ? rolled : slowest;
            }
        }
        return slowest;
    }

    /**
     * The workers' lease ttl. On a Galera cluster, longer than the time it takes to evict a node (no node commits
     * meanwhile, so no lease or membership can be renewed): with the suite's usual 2 s, every view change cost every
     * lease of every node, and the memberships lapsed until it was over.
     */
    Duration ttl() {
        return cluster != null && options.ttl().compareTo(GALERA_TTL) < 0 ? GALERA_TTL : options.ttl();
    }

    /** What a node's transactions and sessions are doing, into the log (-Dfaults.galera.dump=true). */
    void dumpNode(GaleraCluster.Node node) {
        try (Connection connection = node.database().connect(); Statement statement = connection.createStatement()) {
            for (String sql : List.of("SELECT trx_id, trx_state, trx_started, trx_mysql_thread_id, trx_query,"
                    + " trx_rows_locked FROM information_schema.INNODB_TRX",
                    "SELECT id, user, command, time, state, LEFT(info, 120) FROM information_schema.PROCESSLIST"
                            + " WHERE command <> 'Sleep'")) {
                try (ResultSet rs = statement.executeQuery(sql)) {
                    int columns = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        StringBuilder row = new StringBuilder("[dump node " + node.number() + "]");
                        for (int i = 1; i <= columns; i++) {
                            row.append(" | ").append(rs.getString(i));
                        }
                        options.log().println(row);
                    }
                }
            }
        } catch (SQLException e) {
            options.log().println("[dump node " + node.number() + "] failed: " + e.getMessage());
        }
    }

    /** The workers connected to a node, as a fault's {@code worker}: comma-separated. */
    String workersOn(GaleraCluster.Node node) {
        return String.join(",", slots.stream().filter(s -> s.node == node).map(s -> s.worker).toList());
    }

    /** Asks a worker to stop its loops; its answer: whether they stopped, and what it still holds. */
    Map<?, ?> stop(Slot slot) throws IOException, InterruptedException {
        int port = Workers.httpPort(slot.process);
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/fault-worker/stop")).POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException(slot.worker + " answered " + response.statusCode() + ": " + response.body());
        }
        return new ObjectMapper().readValue(response.body(), Map.class);
    }

    /** The first column of the first row of a query with string arguments, or null. */
    static Long single(Connection connection, String sql, String... args) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setString(i + 1, args[i]);
            }
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                long value = rs.getLong(1);
                return rs.wasNull() ? null : value;
            }
        }
    }
}
