package io.quarkiverse.mysqllock.it;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.GaleraCluster;
import io.quarkiverse.mysqllock.test.ReplicatedServers;
import io.quarkiverse.mysqllock.test.ReplicatedServers.Durability;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The fault-injection suite's controller: starts an embedded MariaDB and several worker processes ({@link FaultWorker},
 * each behind a loopback {@link TcpProxy}), injects faults one after another while they contend for a few hot locks,
 * then checks the whole history ({@link FaultChecker}) and writes a report.
 * <p>
 * {@code mvn -B -ntp -Pfaults -DskipTests verify -Dfaults.seconds=600} runs it; {@code FaultSuiteIT} runs a short one.
 */
public final class FaultSuite {

    enum Kind {
        KILL_SESSION("KILL <session>"),
        SIGKILL("SIGKILL of a worker"),
        PAUSE("SIGSTOP/SIGCONT of a worker"),
        DB_RESTART("database restart"),
        NETWORK_STALL("network stall"),
        NETWORK_CUT("network cut"),
        BLACK_HOLE("black hole on one connection"),
        ROW_LOCK("lock-table row held by a transaction"),
        READ_ONLY("database read-only"),
        FAILOVER("failover to the replica"),
        /** The application holds every connection its pool has, for one to three keepalive intervals. */
        POOL_SATURATION("the application saturating its pool"),
        /** One worker stopped and started again with other timing settings, as a rolling change of them does. */
        ROLLING_RESTART("a rolling restart with other settings"),
        NODE_KILL("SIGKILL of a Galera node, and its restart"),
        NODE_PARTITION("a Galera node partitioned from the others");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /**
     * What a run attacks: one engine on a single server with every single-server fault, or the LEASE engine on a
     * replicated pair that fails over again and again (the only fault there), with lossless semi-synchronous or with
     * asynchronous replication. Asynchronous failover loses acknowledged transactions: no lock can hold its guarantees
     * through it, and that run shows what breaks instead of passing.
     */
    enum Scenario {
        NAMED(LockMode.NAMED, null, "NAMED"),
        LEASE(LockMode.LEASE, null, "LEASE"),
        FAILOVER_SEMISYNC(LockMode.LEASE, Durability.SEMISYNC, "LEASE, semi-sync failover"),
        FAILOVER_ASYNC(LockMode.LEASE, Durability.ASYNC, "LEASE, async failover"),
        /** A 3-node Galera cluster, each worker on a node of its own. */
        GALERA(LockMode.LEASE, null, "LEASE, Galera cluster"),
        /**
         * The same with node 3's clock 10 minutes ahead, within the default max-clock-skew (15 minutes): observed expiry
         * keeps every guarantee whatever the clocks read.
         */
        GALERA_SKEW_WITHIN(LockMode.LEASE, null, "LEASE, Galera, a node 10 min ahead (bound 15 min)"),
        /**
         * Node 3's clock 3 s ahead, beyond a max-clock-skew of 1 s: the long-dead shortcut takes live leases there;
         * shows what breaks, and its detection.
         */
        GALERA_SKEW_BEYOND(LockMode.LEASE, null, "LEASE, Galera, a node 3 s ahead (bound 1 s)"),
        /**
         * Leader election on one server ({@link LeaderWorker}): every worker joins the election of each hot name's role,
         * each term is a section fenced by its number, and the faults that hit one worker hit a leader.
         */
        LEADER_NAMED(LockMode.NAMED, null, "leader election, NAMED"),
        LEADER_LEASE(LockMode.LEASE, null, "leader election, LEASE"),
        /**
         * A semaphore of as many permits as there are hot names, on one server: every worker thread takes a permit,
         * each permit's lock is a hot name ({@code <semaphore>#permit-<i>}), so the checker's rules hold per permit and
         * no more holders than permits are ever inside.
         */
        SEMAPHORE_NAMED(LockMode.NAMED, null, "semaphore, NAMED"),
        SEMAPHORE_LEASE(LockMode.LEASE, null, "semaphore, LEASE");

        final LockMode engine;
        /** Null on a single server. */
        final Durability replication;
        final String label;

        Scenario(LockMode engine, Durability replication, String label) {
            this.engine = engine;
            this.replication = replication;
            this.label = label;
        }

        boolean leader() {
            return this == LEADER_NAMED || this == LEADER_LEASE;
        }

        boolean semaphore() {
            return this == SEMAPHORE_NAMED || this == SEMAPHORE_LEASE;
        }

        /** What the workers do: {@code FaultWorker}'s {@code fault-worker.workload}. */
        String workload() {
            return leader() ? "leader" : semaphore() ? "semaphore" : "locks";
        }

        boolean galera() {
            return this == GALERA || this == GALERA_SKEW_WITHIN || this == GALERA_SKEW_BEYOND;
        }

        /** How far ahead node 3's clock runs. */
        Duration nodeAhead() {
            return switch (this) {
                case GALERA_SKEW_WITHIN -> Duration.ofMinutes(10);
                case GALERA_SKEW_BEYOND -> Duration.ofSeconds(3);
                default -> Duration.ZERO;
            };
        }

        /** The workers' quarkus.mysql-lock.lease.max-clock-skew. */
        Duration maxClockSkew() {
            return this == GALERA_SKEW_BEYOND ? Duration.ofSeconds(1) : Duration.ofMinutes(15);
        }

        /** Whether the workers connect as a plain user (privilege checks on); root on replicated servers. */
        boolean plainUser() {
            return replication == null && !galera();
        }

        /** Whether the lock's guarantees must hold (a violation fails the run), or the run shows what breaks. */
        boolean guaranteed() {
            return replication != Durability.ASYNC && this != GALERA_SKEW_BEYOND;
        }

        /** What a run of a scenario without guarantees shows, for its violations. */
        String unguaranteed() {
            return this == GALERA_SKEW_BEYOND
                    ? "what a server clock ahead beyond max-clock-skew breaks (shown on purpose, not a failure of the run)"
                    : "what asynchronous replication cannot prevent (acknowledged transactions lost by the failover;"
                            + " not a failure of the run)";
        }

        List<Kind> kinds() {
            if (leader() || semaphore()) {
                // what ends a leader's term against its will: its death, its pause, its session, its network, the
                // database; and what must not: its application using up its pool, a fleet mid-way through a change
                return List.of(Kind.SIGKILL, Kind.PAUSE, Kind.KILL_SESSION, Kind.NETWORK_STALL, Kind.DB_RESTART,
                        Kind.POOL_SATURATION, Kind.ROLLING_RESTART);
            }
            if (this == GALERA) {
                return List.of(Kind.NODE_KILL, Kind.NODE_PARTITION, Kind.NETWORK_CUT);
            }
            if (galera()) {
                // a holder that stops renewing (cut off, stalled, paused or dead), while a node ahead may take its
                // lease over
                return List.of(Kind.NODE_PARTITION, Kind.NETWORK_STALL, Kind.PAUSE, Kind.SIGKILL);
            }
            return replication == null ? Arrays.stream(Kind.values())
                    .filter(k -> k != Kind.FAILOVER && k != Kind.NODE_KILL && k != Kind.NODE_PARTITION).toList()
                    : List.of(Kind.FAILOVER);
        }

        static Scenario parse(String value) {
            String key = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
            return Arrays.stream(values()).filter(s -> s.name().equals(key)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("Unknown fault scenario '" + value + "' in"
                            + " faults.scenarios: use named, lease, failover-semisync, failover-async, galera,"
                            + " galera-skew-within, galera-skew-beyond, leader-named, leader-lease, semaphore-named or"
                            + " semaphore-lease"));
        }
    }

    /** A fault: its kind, whom it hit, and when it began and ended (wall-clock microseconds). */
    record Fault(Kind kind, String worker, String lockName, long injectedAt, long healedAt, String detail) {

        /**
         * Where recovery is measured from: the end of the fault, except for a LEASE holder that is paused or stalled,
         * whose lease others must take over while the fault lasts.
         */
        long recoveryFrom(LockMode engine) {
            return engine == LockMode.LEASE && (kind == Kind.PAUSE || kind == Kind.NETWORK_STALL
                    || kind == Kind.BLACK_HOLE || kind == Kind.NODE_KILL || kind == Kind.NODE_PARTITION) ? injectedAt
                            : healedAt;
        }

        @Override
        public String toString() {
            return kind.label + " (" + detail + ", " + (healedAt - injectedAt) / 1000 + " ms)";
        }
    }

    record Options(Duration duration, List<Scenario> scenarios, int workers, int threads, List<String> names,
            Duration ttl, Duration keepalive, Path out, long seed, PrintStream log) {

        static Options fromSystemProperties() {
            return new Options(Duration.ofSeconds(Long.getLong("faults.seconds", 120)),
                    Arrays.stream(System.getProperty("faults.scenarios", "named,lease").split(","))
                            .map(Scenario::parse).toList(),
                    Integer.getInteger("faults.workers", 3), Integer.getInteger("faults.threads", 8),
                    List.of("hot-1", "hot-2", "hot-3"), Duration.ofSeconds(2), Duration.ofMillis(500),
                    Path.of(System.getProperty("faults.out", "target/fault-suite")),
                    Long.getLong("faults.seed", System.nanoTime()), System.out);
        }

        Duration faultLength() {
            return (ttl.compareTo(keepalive) > 0 ? ttl : keepalive).plusSeconds(1);
        }

        /** Every hot name must be acquired again within this after a fault (keepalive or ttl, plus 2 s). */
        Duration recoveryBound(LockMode engine) {
            return (engine == LockMode.NAMED ? keepalive : ttl).plusSeconds(2);
        }
    }

    /** One scenario's run: figures, violations and end state. */
    record Result(Scenario scenario, Map<String, Object> figures, List<String> violations) {

        /** Violations of a run whose guarantees must hold; none for a run that shows what breaks. */
        List<String> failures() {
            return scenario.guaranteed() ? violations : List.of();
        }
    }

    /**
     * The settings a rolling restart gives its worker, one of each drawn at random; the worker keeps them until its next
     * rolling restart: the fleet runs with instances of different keepalive intervals, ttls, and leader hand-over.
     */
    static final List<Duration> ROLLING_KEEPALIVES = List.of(Duration.ofMillis(300), Duration.ofMillis(500),
            Duration.ofMillis(800));
    static final List<Duration> ROLLING_TTLS = List.of(Duration.ofMillis(1500), Duration.ofSeconds(2),
            Duration.ofSeconds(3));

    /** The workers' user on a single server: not SUPER, so that read_only binds it. */
    static final String WORKER_USER = "worker";
    /** statement-timeout of the workers: shorter than a fault, so that a black-holed connection is abandoned. */
    static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(1);

    /** The shortest lease ttl of the Galera scenarios: see {@link #ttl()}. */
    static final Duration GALERA_TTL = Duration.ofSeconds(5);

    /** How long the replication link is stalled before the primary dies: what asynchronous failover loses. */
    static final Duration FAILOVER_STALL = Duration.ofSeconds(1);

    private final Options options;
    private final Scenario scenario;
    /**
     * The hot names: the options', in a leader scenario their roles' locks ({@code <name>#leader}), in a semaphore
     * scenario the permits' locks of semaphore {@code hot}, one permit per name of the options.
     */
    private final List<String> names;
    private final LockMode engine;
    private final Random random;
    private final Path directory;
    private final List<Fault> faults = new ArrayList<>();
    private final Map<String, Long> deaths = new LinkedHashMap<>();
    private final List<Slot> slots = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();
    /** The server the workers use: the primary of {@link #servers} in a failover scenario. */
    private TestDatabase db;
    private ReplicatedServers servers;
    private GaleraCluster cluster;
    private FaultHistory history;

    private final class Slot {
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
            properties.put("fault-worker.names", String.join(",", names));
            properties.put("fault-worker.journal", directory.resolve(worker + ".tsv").toAbsolutePath().toString());
            properties.putAll(rolled);
            process = AppProcess.start(worker, Workers.jar(), properties, options.log(),
                    line -> line.contains("ERROR") || line.contains("ready"));
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

    private FaultSuite(Options options, Scenario scenario) {
        this.options = options;
        this.scenario = scenario;
        this.names = scenario.leader() ? options.names().stream().map(name -> name + LeaderWorker.SUFFIX).toList()
                : scenario.semaphore() ? IntStream.range(0, options.names().size()).mapToObj(i -> "hot#permit-" + i).toList()
                        : options.names();
        this.engine = scenario.engine;
        this.random = new Random(options.seed() + scenario.ordinal());
        this.directory = options.out().resolve(scenario.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.fromSystemProperties();
        List<Result> results = run(options);
        System.exit(results.stream().allMatch(r -> r.failures().isEmpty()) ? 0 : 1);
    }

    /** Runs every scenario of the options in turn, writes the report, and returns the results. */
    static List<Result> run(Options options) throws Exception {
        Files.createDirectories(options.out());
        List<Result> results = new ArrayList<>();
        for (Scenario scenario : options.scenarios()) {
            results.add(new FaultSuite(options, scenario).run());
        }
        FaultReport.write(options, results);
        return results;
    }

    private Result run() throws Exception {
        Files.createDirectories(directory);
        clearJournals();
        PrintStream log = options.log();
        log.printf("%n=== Fault suite, %s: %d workers x %d threads on %s for %d s (seed %d) ===%n", scenario.label,
                options.workers(), options.threads(), names, options.duration().toSeconds(), options.seed());
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
        history = new FaultHistory(directory);
        try {
            prepareDatabase();
            for (int i = 1; i <= options.workers(); i++) {
                slots.add(new Slot(i));
            }
            slots.forEach(Slot::start);
            slots.forEach(Slot::awaitReady);
            long started = FaultJournal.now();
            long deadline = System.nanoTime() + options.duration().toNanos();
            List<Kind> rotation = new ArrayList<>();
            while (System.nanoTime() < deadline) {
                if (rotation.isEmpty()) {
                    rotation.addAll(kinds());
                    Collections.shuffle(rotation, random);
                }
                Fault fault = inject(rotation.remove(0));
                faults.add(fault);
                long recovery = awaitRecovery(fault);
                log.printf("[controller] %s: recovered in %s%n", fault,
                        recovery == Long.MAX_VALUE ? "NEVER" : recovery / 1000 + " ms");
                if (recovery == Long.MAX_VALUE) {
                    dumpThreads(faults.size());
                }
                Thread.sleep(300 + random.nextInt(700));
            }
            long ended = FaultJournal.now();
            Map<String, Object> endState = endState();
            history.refresh();
            history.died(deaths);
            try (Connection connection = connectForChecks()) {
                history.loadWrites(connection);
            }
            // kept beside the journals: the embedded server and its data are gone after the run
            Files.write(directory.resolve("accepted-writes.txt"), history.writes().stream()
                    .map(w -> w.id() + "\t" + w.name() + "\t" + w.fence() + "\t" + w.section() + "\t" + w.writtenAt())
                    .toList());
            FaultChecker checker = new FaultChecker(engine, scenario.leader(), history, faults, names,
                    recoveryBound().toNanos() / 1000, longestTtl().toNanos() / 1000).check();
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("seconds", (ended - started) / 1_000_000);
            figures.put("workers x threads", options.workers() + " x "
                    + (scenario.leader() ? names.size() + " elections" : options.threads()));
            figures.putAll(checker.figures);
            figures.put("end state", endState);
            List<String> violations = new ArrayList<>(checker.violations);
            if (cluster != null) {
                figures.put("workers that warned of a server clock ahead", workersWhoseLogSays("Leases do not depend on it"));
                long alarms = workersWhoseLogSays("more than quarkus.mysql-lock.lease.max-clock-skew");
                figures.put("workers that logged a server clock ahead beyond max-clock-skew", alarms);
                if (alarms > 0 && scenario.nodeAhead().compareTo(scenario.maxClockSkew()) <= 0) {
                    violations.add(alarms + " worker(s) reported a server clock ahead beyond max-clock-skew, while no"
                            + " node's clock was (false alarm)");
                }
            }
            endStateViolations(endState, violations);
            Result result = new Result(scenario, figures, violations);
            log.printf("=== %s: %s ===%n", scenario.label, violations.isEmpty() ? "no violation"
                    : violations.size() + " violation(s)" + (scenario.guaranteed() ? "" : ": " + scenario.unguaranteed()));
            violations.forEach(v -> log.println("  VIOLATION " + v));
            return result;
        } finally {
            for (Slot slot : slots) {
                if (slot.process != null) {
                    slot.process.resume();
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
                log.println("Stopping the database failed: " + e.getMessage());
            }
        }
    }

    /** The scenario's kinds of fault, or those of them {@code -Dfaults.kinds} lists (to chase one kind's problem). */
    private List<Kind> kinds() {
        String only = System.getProperty("faults.kinds", "");
        if (only.isBlank()) {
            return scenario.kinds();
        }
        List<String> wanted = Arrays.stream(only.split(",")).map(k -> k.trim().toUpperCase(Locale.ROOT).replace('-', '_'))
                .toList();
        return scenario.kinds().stream().filter(kind -> wanted.contains(kind.name())).toList();
    }

    private void prepareDatabase() {
        if (scenario.plainUser()) {
            db.execute("CREATE USER IF NOT EXISTS '" + WORKER_USER + "'@'%' IDENTIFIED BY '" + WORKER_USER + "'");
            db.execute("GRANT SELECT, INSERT, UPDATE, CREATE ON " + TestDatabase.SCHEMA + ".* TO '" + WORKER_USER + "'@'%'");
        }
        db.execute("CREATE TABLE resource (name VARCHAR(64) PRIMARY KEY, value BIGINT NOT NULL DEFAULT 0,"
                + " last_fence BIGINT NOT NULL DEFAULT 0)");
        db.execute("CREATE TABLE resource_write (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL,"
                + " fence BIGINT NOT NULL, section VARCHAR(100) NOT NULL, written_at BIGINT NOT NULL)");
        for (String name : names) {
            db.execute("INSERT INTO resource (name) VALUES ('" + name + "')");
        }
    }

    // --- faults ---

    /**
     * How long a holder is stopped (paused, or its network stalled): past the ttl, so that its leases end; with a node's
     * clock ahead, also anywhere from a third of the ttl, where that node sees by its clock a lease end that its holder
     * still holds (a take-over then must wait for the lease seen unrenewed, not for the clock).
     */
    private long stopLength(long length) {
        return scenario.nodeAhead().isZero() ? length : random.nextLong(ttl().toMillis() / 3, length + 1);
    }

    private Fault inject(Kind kind) throws Exception {
        Slot slot = scenario.leader() ? aLeader() : slots.get(random.nextInt(slots.size()));
        long length = (longestTtl().compareTo(slowestKeepalive()) > 0 ? longestTtl() : slowestKeepalive()).plusSeconds(1)
                .toMillis();
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
                deaths.put(worker, killed);
                slot.start();
                slot.awaitReady();
                return new Fault(kind, worker, null, start, killed, "pid " + pid + ", restarted as " + slot.worker);
            }
            case PAUSE -> {
                return lasting(kind, slot, stopLength(length), slot.process::pause, slot.process::resume);
            }
            case DB_RESTART -> {
                db.restart();
                // the embedded server starts without privilege checks: turn them on again
                db = db.withPrivilegeChecks();
                return new Fault(kind, null, null, start, FaultJournal.now(), "same port and data");
            }
            case BLACK_HOLE -> {
                return blackHole(start, length);
            }
            case ROW_LOCK -> {
                return rowLock(start, longestTtl().plusSeconds(1).toMillis());
            }
            case POOL_SATURATION -> {
                // one to three keepalive intervals
                long millis = options.keepalive().toMillis() * (1 + random.nextInt(3));
                String held = saturate(slot, millis);
                return new Fault(kind, slot.worker, null, start, FaultJournal.now(), slot.worker + " held " + held
                        + " connections of its pool for " + millis + " ms");
            }
            case ROLLING_RESTART -> {
                Map<String, String> settings = new LinkedHashMap<>();
                settings.put("quarkus.mysql-lock.named.keepalive-interval",
                        ROLLING_KEEPALIVES.get(random.nextInt(ROLLING_KEEPALIVES.size())).toMillis() + "ms");
                if (cluster == null) {
                    settings.put("quarkus.mysql-lock.lease.ttl",
                            ROLLING_TTLS.get(random.nextInt(ROLLING_TTLS.size())).toMillis() + "ms");
                }
                settings.put("quarkus.mysql-lock.named.instant-leader-hand-over", String.valueOf(random.nextBoolean()));
                String detail = slot.restartWith(settings);
                return new Fault(kind, slot.worker, null, start, FaultJournal.now(), detail);
            }
            case READ_ONLY -> {
                db.execute("SET GLOBAL read_only = 1");
                try {
                    Thread.sleep(length);
                } finally {
                    db.execute("SET GLOBAL read_only = 0");
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
                return new Fault(kind, workersOn(node), null, start, FaultJournal.now(), "node " + node.number()
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
                        for (GaleraCluster.Node other : cluster.nodes()) {
                            if (other != node) {
                                dumpNode(other);
                            }
                        }
                    }
                } finally {
                    node.heal();
                }
                return new Fault(kind, workersOn(node), null, start, FaultJournal.now(), "node " + node.number()
                        + " non-primary after " + (isolated - start) / 1000 + " ms, for " + length + " ms, then healed");
            }
            default -> throw new IllegalArgumentException(kind.toString());
        }
    }

    /**
     * A connection for the controller's checks. On a Galera cluster its reads wait for every commit the cluster
     * acknowledged (a worker's last write may have been made on another node a moment before).
     */
    private Connection connectForChecks() throws SQLException {
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
    private Duration recoveryBound() {
        Duration bound = (engine == LockMode.NAMED ? slowestKeepalive() : longestTtl()).plusSeconds(2);
        if (scenario == Scenario.LEADER_NAMED) {
            // strict leadership: a term begins the fleet's largest window, two keepalive intervals (and 100 ms), after
            // its grant
            return bound.plus(slowestKeepalive().multipliedBy(2)).plusMillis(100);
        }
        if (cluster == null) {
            return bound;
        }
        return longestTtl().plusSeconds(2).plus(GaleraCluster.EVICTION);
    }

    /** The longest ttl a worker may run with: a rolling restart's, or the run's. */
    private Duration longestTtl() {
        Duration longest = ttl();
        if (kinds().contains(Kind.ROLLING_RESTART) && cluster == null) {
            for (Duration rolled : ROLLING_TTLS) {
                longest = rolled.compareTo(longest) > 0 ? rolled : longest;
            }
        }
        return longest;
    }

    /** The longest keepalive interval a worker may run with: a rolling restart's, or the run's. */
    private Duration slowestKeepalive() {
        Duration slowest = options.keepalive();
        if (kinds().contains(Kind.ROLLING_RESTART)) {
            for (Duration rolled : ROLLING_KEEPALIVES) {
                slowest = rolled.compareTo(slowest) > 0 ? rolled : slowest;
            }
        }
        return slowest;
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

    /**
     * The workers' lease ttl. On a Galera cluster, longer than the time it takes to evict a node (no node commits
     * meanwhile, so no lease or membership can be renewed): with the suite's usual 2 s, every view change cost every
     * lease of every node, and the memberships lapsed until it was over.
     */
    private Duration ttl() {
        return cluster != null && options.ttl().compareTo(GALERA_TTL) < 0 ? GALERA_TTL : options.ttl();
    }

    /** How many workers' logs (every incarnation's) contain the phrase. */
    private long workersWhoseLogSays(String phrase) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(f -> f.getFileName().toString().matches("w[0-9.]+\\.log.*")).filter(f -> {
                try {
                    return Files.readString(f).contains(phrase);
                } catch (IOException e) {
                    return false;
                }
            }).count();
        }
    }

    /** What a node's transactions and sessions are doing, into the log (-Dfaults.galera.dump=true). */
    private void dumpNode(GaleraCluster.Node node) {
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
    private String workersOn(GaleraCluster.Node node) {
        return String.join(",", slots.stream().filter(s -> s.node == node).map(s -> s.worker).toList());
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
        servers.stallLink();
        Thread.sleep(FAILOVER_STALL.toMillis());
        long crashed = FaultJournal.now();
        db = servers.failOver();
        for (Slot slot : slots) {
            slot.proxy.retarget(db.port());
        }
        long promoted = FaultJournal.now();
        servers.attachReplica();
        long attached = FaultJournal.now();
        // The fault ends when the promoted server takes commits: at once (asynchronous), or once its own replica has
        // attached (semi-synchronous: a commit waits for a replica to have it).
        long healed = servers.durability() == Durability.SEMISYNC ? attached : promoted;
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
        java.util.Collections.shuffle(order, random);
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
        try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
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
        try (Connection connection = connectForChecks()) {
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
        try (Connection connection = db.connect();
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
        try (Connection connection = connectForChecks()) {
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

    private static Long single(Connection connection, String sql, String... args) throws SQLException {
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

    /** Waits until every hot name was acquired after the fault; returns the time that took, or MAX_VALUE. */
    private long awaitRecovery(Fault fault) throws InterruptedException {
        long give = recoveryBound().plusSeconds(5).toNanos();
        long end = System.nanoTime() + give;
        FaultChecker probe = new FaultChecker(engine, scenario.leader(), history, List.of(), names, 0, 0);
        while (System.nanoTime() < end) {
            history.refresh();
            long recovery = probe.recoveryMicros(fault);
            if (recovery != Long.MAX_VALUE) {
                return recovery;
            }
            Thread.sleep(50);
        }
        return Long.MAX_VALUE;
    }

    // --- end state (rule 5) ---

    private Map<String, Object> endState() throws Exception {
        Map<String, Object> state = new LinkedHashMap<>();
        long pinned = 0;
        long held = 0;
        for (Slot slot : slots) {
            Map<?, ?> answer = stop(slot);
            pinned += ((Number) answer.get("pinned")).longValue();
            held += ((Number) answer.get("held")).longValue();
            if (!Boolean.TRUE.equals(answer.get("stopped"))) {
                state.put("workers whose loops did not stop", slot.worker);
            }
            if (answer.get("pinned connections") instanceof List<?> described && !described.isEmpty()) {
                options.log().printf("[controller] %s keeps connections pinned: %s%n", slot.worker, described);
            }
        }
        state.put("pinned connections left", pinned);
        state.put("locks still held by live workers", held);
        try (Connection connection = connectForChecks()) {
            long namedHeld = 0;
            for (String name : names) {
                if (single(connection, "SELECT IS_USED_LOCK(?)", name) != null) {
                    namedHeld++;
                }
            }
            state.put("named locks held on the server", namedHeld);
            if (engine == LockMode.LEASE) {
                long lastDeath = deaths.values().stream().mapToLong(Long::longValue).max().orElse(0);
                if (cluster != null && !faults.isEmpty()) {
                    // a give-up refused by a node cut off from the others (1047) leaves its lease to end by itself
                    lastDeath = Math.max(lastDeath, faults.get(faults.size() - 1).healedAt());
                }
                long wait = lastDeath + longestTtl().toNanos() / 1000 + 200_000 - FaultJournal.now();
                if (wait > 0) {
                    TimeUnit.MICROSECONDS.sleep(wait);
                }
                // read on the node whose clock runs furthest ahead: a lease ends there no earlier than by its writer's
                try (Connection ahead = scenario.nodeAhead().isZero() ? null : cluster.node(3).database().connect()) {
                    Connection reader = ahead == null ? connection : ahead;
                    Long left = single(reader, "SELECT COUNT(*) FROM mysql_lock WHERE expires_at > UTC_TIMESTAMP(6)"
                            + " AND owner IS NOT NULL AND name NOT LIKE '~%'");
                    state.put("unexpired leases left (live workers stopped, dead ones past their ttl)", left);
                    if (left != null && left > 0) {
                        logLeasesLeft(reader);
                    }
                }
            }
        }
        return state;
    }

    /** The leases left behind, with the checking server's clock: which holder, and how far in its future. */
    private void logLeasesLeft(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(
                        "SELECT name, owner, fence, acquired_at, expires_at, UTC_TIMESTAMP(6) FROM mysql_lock"
                                + " WHERE expires_at > UTC_TIMESTAMP(6) AND owner IS NOT NULL AND name NOT LIKE '~%'")) {
            while (rs.next()) {
                options.log().printf("[controller] lease left: %s owned by %s, fence %d, acquired at %s, expires at %s;"
                        + " the checking server's time %s; deaths %s; last fault %s%n", rs.getString(1),
                        rs.getString(2), rs.getLong(3), rs.getString(4), rs.getString(5), rs.getString(6), deaths,
                        faults.isEmpty() ? "none" : faults.get(faults.size() - 1));
            }
        }
    }

    private static void endStateViolations(Map<String, Object> state, List<String> violations) {
        state.forEach((key, value) -> {
            if (value instanceof Number number ? number.longValue() != 0 : value != null) {
                violations.add("End state: " + key + " = " + value);
            }
        });
    }

    private Map<?, ?> stop(Slot slot) throws IOException, InterruptedException {
        int port = Workers.httpPort(slot.process);
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/fault-worker/stop")).POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException(slot.worker + " answered " + response.statusCode() + ": " + response.body());
        }
        return new ObjectMapper().readValue(response.body(), Map.class);
    }

    /**
     * Every worker's threads, and the server's sessions holding hot names, beside the journals, when a fault was not
     * recovered from: what holds the locks.
     */
    private void dumpThreads(int faultNumber) {
        StringBuilder server = new StringBuilder();
        try (Connection connection = connectForChecks()) {
            for (String name : names) {
                Long holder = single(connection, "SELECT IS_USED_LOCK(?)", name);
                server.append(name).append(" held by session ").append(holder).append('\n');
            }
            try (Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery(
                            "SELECT ID, USER, HOST, COMMAND, TIME_MS, STATE, INFO FROM information_schema.PROCESSLIST")) {
                while (rs.next()) {
                    for (int column = 1; column <= 7; column++) {
                        server.append(column == 1 ? "" : "\t").append(rs.getString(column));
                    }
                    server.append('\n');
                }
            }
            for (Slot slot : slots) {
                server.append(slot.worker).append(" connections, by the port the server sees: ")
                        .append(slot.proxy.serverSidePorts()).append('\n');
            }
            Files.writeString(directory.resolve("server-after-fault-" + faultNumber + ".txt"), server);
        } catch (SQLException | IOException e) {
            options.log().println("[controller] could not read the server's state: " + e);
        }
        for (Slot slot : slots) {
            Path file = directory.resolve(slot.worker + "-threads-after-fault-" + faultNumber + ".txt");
            try {
                Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                        String.valueOf(slot.process.pid()), "Thread.print").redirectOutput(file.toFile())
                        .redirectErrorStream(true).start();
                jcmd.waitFor(30, TimeUnit.SECONDS);
            } catch (IOException e) {
                options.log().println("[controller] could not dump the threads of " + slot.worker + ": " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Journals of an earlier run in the same directory would mix with this one's. */
    private void clearJournals() throws IOException {
        try (java.util.stream.Stream<Path> files = Files.list(directory)) {
            // journals, worker logs and the dumps of an earlier run
            for (Path file : files.filter(f -> f.toString().endsWith(".tsv") || f.toString().contains(".log")
                    || f.getFileName().toString().contains("-after-fault-")).toList()) {
                Files.delete(file);
            }
        }
    }

    static ObjectMapper json() {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }
}
