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

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.test.AppProcess;
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
        FAILOVER("failover to the replica");

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
        FAILOVER_ASYNC(LockMode.LEASE, Durability.ASYNC, "LEASE, async failover");

        final LockMode engine;
        /** Null on a single server. */
        final Durability replication;
        final String label;

        Scenario(LockMode engine, Durability replication, String label) {
            this.engine = engine;
            this.replication = replication;
            this.label = label;
        }

        /** Whether the lock's guarantees must hold (a violation fails the run), or the run shows what breaks. */
        boolean guaranteed() {
            return replication != Durability.ASYNC;
        }

        List<Kind> kinds() {
            return replication == null ? Arrays.stream(Kind.values()).filter(k -> k != Kind.FAILOVER).toList()
                    : List.of(Kind.FAILOVER);
        }

        static Scenario parse(String value) {
            String key = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
            return Arrays.stream(values()).filter(s -> s.name().equals(key)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("Unknown fault scenario '" + value + "' in"
                            + " faults.scenarios: use named, lease, failover-semisync or failover-async"));
        }
    }

    /** A fault: its kind, whom it hit, and when it began and ended (wall-clock microseconds). */
    record Fault(Kind kind, String worker, String lockName, long injectedAt, long healedAt, String detail) {

        /**
         * Where recovery is measured from: the end of the fault, except for a LEASE holder that is paused or stalled,
         * whose lease others must take over while the fault lasts.
         */
        long recoveryFrom(LockMode engine) {
            return engine == LockMode.LEASE && (kind == Kind.PAUSE || kind == Kind.NETWORK_STALL) ? injectedAt : healedAt;
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

    /** How long the replication link is stalled before the primary dies: what asynchronous failover loses. */
    static final Duration FAILOVER_STALL = Duration.ofSeconds(1);

    private final Options options;
    private final Scenario scenario;
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
    private FaultHistory history;

    private final class Slot {
        final int index;
        final TcpProxy proxy;
        int incarnation;
        String worker;
        AppProcess process;

        Slot(int index) {
            this.index = index;
            this.proxy = TcpProxy.start("w" + index, db.port());
        }

        void start() {
            incarnation++;
            worker = "w" + index + "." + incarnation;
            Map<String, String> properties = new LinkedHashMap<>();
            properties.put("quarkus.http.port", "0");
            properties.put("quarkus.datasource.jdbc.url", proxy.rewrite(db.jdbcUrl()));
            properties.put("quarkus.datasource.username", db.user());
            properties.put("quarkus.datasource.password", db.password());
            properties.put("quarkus.mysql-lock.mode", engine.name().toLowerCase(Locale.ROOT));
            properties.put("quarkus.mysql-lock.instance-id", worker);
            properties.put("quarkus.mysql-lock.lease.ttl", options.ttl().toMillis() + "ms");
            properties.put("quarkus.mysql-lock.named.keepalive-interval", options.keepalive().toMillis() + "ms");
            properties.put("quarkus.log.console.format", "%d{HH:mm:ss.SSS} %-5p %s%e%n");
            properties.put("fault-worker.enabled", "true");
            properties.put("fault-worker.id", worker);
            properties.put("fault-worker.threads", String.valueOf(options.threads()));
            properties.put("fault-worker.names", String.join(",", options.names()));
            properties.put("fault-worker.journal", directory.resolve(worker + ".tsv").toAbsolutePath().toString());
            process = AppProcess.start(worker, Workers.jar(), properties, options.log(),
                    line -> line.contains("ERROR") || line.contains("ready"));
        }

        void awaitReady() {
            process.awaitLine(line -> line.contains("Fault worker " + worker + " ready"), Duration.ofSeconds(90));
        }
    }

    private FaultSuite(Options options, Scenario scenario) {
        this.options = options;
        this.scenario = scenario;
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
                options.workers(), options.threads(), options.names(), options.duration().toSeconds(), options.seed());
        if (scenario.replication == null) {
            db = TestDatabase.startEmbedded();
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
            long started = FaultWorker.now();
            long deadline = System.nanoTime() + options.duration().toNanos();
            List<Kind> rotation = new ArrayList<>();
            while (System.nanoTime() < deadline) {
                if (rotation.isEmpty()) {
                    rotation.addAll(scenario.kinds());
                    Collections.shuffle(rotation, random);
                }
                Fault fault = inject(rotation.remove(0));
                faults.add(fault);
                long recovery = awaitRecovery(fault);
                log.printf("[controller] %s: recovered in %s%n", fault,
                        recovery == Long.MAX_VALUE ? "NEVER" : recovery / 1000 + " ms");
                Thread.sleep(300 + random.nextInt(700));
            }
            long ended = FaultWorker.now();
            Map<String, Object> endState = endState();
            history.refresh();
            history.died(deaths);
            try (Connection connection = db.connect()) {
                history.loadWrites(connection);
            }
            // kept beside the journals: the embedded server and its data are gone after the run
            Files.write(directory.resolve("accepted-writes.txt"), history.writes().stream()
                    .map(w -> w.id() + "\t" + w.name() + "\t" + w.fence() + "\t" + w.section() + "\t" + w.writtenAt())
                    .toList());
            FaultChecker checker = new FaultChecker(engine, history, faults, options.names(),
                    options.recoveryBound(engine).toNanos() / 1000, options.ttl().toNanos() / 1000).check();
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("seconds", (ended - started) / 1_000_000);
            figures.put("workers x threads", options.workers() + " x " + options.threads());
            figures.putAll(checker.figures);
            figures.put("end state", endState);
            List<String> violations = new ArrayList<>(checker.violations);
            endStateViolations(endState, violations);
            Result result = new Result(scenario, figures, violations);
            log.printf("=== %s: %s ===%n", scenario.label, violations.isEmpty() ? "no violation"
                    : violations.size() + " violation(s)" + (scenario.guaranteed() ? ""
                            : ", which asynchronous replication cannot prevent: acknowledged transactions were lost"));
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
                } else {
                    db.stop();
                }
            } catch (RuntimeException e) {
                log.println("Stopping the database failed: " + e.getMessage());
            }
        }
    }

    private void prepareDatabase() {
        db.execute("CREATE TABLE resource (name VARCHAR(64) PRIMARY KEY, value BIGINT NOT NULL DEFAULT 0,"
                + " last_fence BIGINT NOT NULL DEFAULT 0)");
        db.execute("CREATE TABLE resource_write (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL,"
                + " fence BIGINT NOT NULL, section VARCHAR(100) NOT NULL, written_at DATETIME(6) NOT NULL)");
        for (String name : options.names()) {
            db.execute("INSERT INTO resource (name) VALUES ('" + name + "')");
        }
    }

    // --- faults ---

    private Fault inject(Kind kind) throws Exception {
        Slot slot = slots.get(random.nextInt(slots.size()));
        long length = options.faultLength().toMillis();
        long start = FaultWorker.now();
        switch (kind) {
            case KILL_SESSION -> {
                return killSession(start);
            }
            case SIGKILL -> {
                String worker = slot.worker;
                long pid = slot.process.pid();
                slot.process.kill();
                long killed = FaultWorker.now();
                deaths.put(worker, killed);
                slot.start();
                slot.awaitReady();
                return new Fault(kind, worker, null, start, killed, "pid " + pid + ", restarted as " + slot.worker);
            }
            case PAUSE -> {
                return lasting(kind, slot, length, slot.process::pause, slot.process::resume);
            }
            case DB_RESTART -> {
                db.restart();
                return new Fault(kind, null, null, start, FaultWorker.now(), "same port and data");
            }
            case NETWORK_STALL -> {
                return lasting(kind, slot, length, slot.proxy::stall, slot.proxy::resume);
            }
            case NETWORK_CUT -> {
                return lasting(kind, slot, 1000, slot.proxy::cut, slot.proxy::heal);
            }
            case FAILOVER -> {
                return failOver(start);
            }
            default -> throw new IllegalArgumentException(kind.toString());
        }
    }

    /** A fault that hits one worker for a while: begin, wait, end. */
    private static Fault lasting(Kind kind, Slot slot, long millis, Runnable begin, Runnable end)
            throws InterruptedException {
        long start = FaultWorker.now();
        begin.run();
        try {
            Thread.sleep(millis);
        } finally {
            end.run();
        }
        return new Fault(kind, slot.worker, null, start, FaultWorker.now(), slot.worker);
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
        long crashed = FaultWorker.now();
        db = servers.failOver();
        for (Slot slot : slots) {
            slot.proxy.retarget(db.port());
        }
        long promoted = FaultWorker.now();
        servers.attachReplica();
        long attached = FaultWorker.now();
        // The fault ends when the promoted server takes commits: at once (asynchronous), or once its own replica has
        // attached (semi-synchronous: a commit waits for a replica to have it).
        long healed = servers.durability() == Durability.SEMISYNC ? attached : promoted;
        return new Fault(Kind.FAILOVER, null, null, start, healed, "link stalled " + FAILOVER_STALL.toMillis()
                + " ms, primary killed, replica promoted in " + (promoted - crashed) / 1000 + " ms, new replica in "
                + (attached - promoted) / 1000 + " ms");
    }

    /** KILLs the session that holds a hot name (NAMED), or a random worker session (LEASE: leases are not sessions). */
    private Fault killSession(long start) throws SQLException, InterruptedException {
        try (Connection connection = db.connect()) {
            if (engine == LockMode.NAMED) {
                for (int attempt = 0; attempt < 50; attempt++) {
                    String name = options.names().get(random.nextInt(options.names().size()));
                    long lookedUp = FaultWorker.now();
                    Long holder = single(connection, "SELECT IS_USED_LOCK(?)", name);
                    if (holder != null) {
                        try (PreparedStatement kill = connection.prepareStatement("KILL " + holder)) {
                            kill.execute();
                        } catch (SQLException e) {
                            continue; // it ended on its own in between
                        }
                        return new Fault(Kind.KILL_SESSION, null, name, lookedUp, FaultWorker.now(),
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
            long at = FaultWorker.now();
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
        long give = options.recoveryBound(engine).plusSeconds(5).toNanos();
        long end = System.nanoTime() + give;
        FaultChecker probe = new FaultChecker(engine, history, List.of(), options.names(), 0, 0);
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
        }
        state.put("pinned connections left", pinned);
        state.put("locks still held by live workers", held);
        try (Connection connection = db.connect()) {
            long namedHeld = 0;
            for (String name : options.names()) {
                if (single(connection, "SELECT IS_USED_LOCK(?)", name) != null) {
                    namedHeld++;
                }
            }
            state.put("named locks held on the server", namedHeld);
            if (engine == LockMode.LEASE) {
                long lastDeath = deaths.values().stream().mapToLong(Long::longValue).max().orElse(0);
                long wait = lastDeath + options.ttl().toNanos() / 1000 + 200_000 - FaultWorker.now();
                if (wait > 0) {
                    TimeUnit.MICROSECONDS.sleep(wait);
                }
                state.put("unexpired leases left (live workers stopped, dead ones past their ttl)",
                        single(connection, "SELECT COUNT(*) FROM mysql_lock WHERE expires_at > UTC_TIMESTAMP(6)"
                                + " AND owner IS NOT NULL"));
            }
        }
        return state;
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

    /** Journals of an earlier run in the same directory would mix with this one's. */
    private void clearJournals() throws IOException {
        try (java.util.stream.Stream<Path> files = Files.list(directory)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".tsv")).toList()) {
                Files.delete(file);
            }
        }
    }

    static ObjectMapper json() {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }
}
