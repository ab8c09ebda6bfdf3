package io.quarkiverse.mysqllock.it;

import static io.quarkiverse.mysqllock.it.FaultEnvironment.single;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.it.FaultEnvironment.Slot;

/**
 * The fault-injection suite's controller: starts an embedded MariaDB and several worker processes ({@link FaultWorker},
 * each behind a loopback {@code TcpProxy}), injects faults one after another while they contend for a few hot locks,
 * then checks the whole history ({@link FaultChecker}) and writes a report.
 * <p>
 * {@code mvn -B -ntp -Pfaults -DskipTests verify -Dfaults.seconds=600} runs it; {@code FaultSuiteIT} runs a short one.
 * <p>
 * This class is the orchestration: the entry point and its options ({@code faults.*} system properties), the suite's
 * vocabulary shared with the checker and the report ({@link Kind}, {@link Fault}, {@link Options}, {@link Result}),
 * and each scenario's run: the rotation of fault kinds, the wait for recovery after each fault, the end state, the
 * figures and the violations. What a scenario is lives in {@link Scenario}, the system it runs on (database, workers,
 * timing bounds) in {@link FaultEnvironment}, and how each kind of fault is injected in {@link FaultInjector}.
 */
public final class FaultSuite {

    /** The kinds of fault {@link FaultInjector} injects; a kind's label names it in the log and the report. */
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
        NODE_PARTITION("a Galera node partitioned from the others"),
        /** Every worker SIGKILLed, down for a few ticks of the scheduling scenario's job, then all started again. */
        FLEET_DOWN("every worker killed for a few ticks, then started again");

        final String label;

        Kind(String label) {
            this.label = label;
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

    private final Options options;
    private final Scenario scenario;
    private final FaultEnvironment env;
    private final FaultInjector injector;
    /** The environment's hot names, engine and directory. */
    private final List<String> names;
    private final LockMode engine;
    private final Path directory;
    private final List<Fault> faults = new ArrayList<>();
    private FaultHistory history;

    private FaultSuite(Options options, Scenario scenario) {
        this.options = options;
        this.scenario = scenario;
        this.env = new FaultEnvironment(options, scenario);
        this.injector = new FaultInjector(env);
        this.names = env.names;
        this.engine = env.engine;
        this.directory = env.directory;
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

    /**
     * One scenario's run: starts its environment, injects faults in a shuffled rotation of its kinds until the duration
     * is over (waiting for the recovery from each, with a random pause between them), then stops the workers, checks
     * the history and the end state, and prints the verdict.
     */
    private Result run() throws Exception {
        Files.createDirectories(directory);
        clearJournals();
        PrintStream log = options.log();
        log.printf("%n=== Fault suite, %s: %d workers x %d threads on %s for %d s (seed %d) ===%n", scenario.label,
                options.workers(), options.threads(), names, options.duration().toSeconds(), options.seed());
        env.startDatabase();
        history = new FaultHistory(directory);
        try {
            env.prepareDatabase();
            env.startWorkers();
            JobControls controls = scenario.jobs() ? new JobControls(env) : null;
            long started = FaultJournal.now();
            long deadline = System.nanoTime() + options.duration().toNanos();
            List<Kind> rotation = new ArrayList<>();
            while (System.nanoTime() < deadline) {
                if (rotation.isEmpty()) {
                    rotation.addAll(env.kinds());
                    Collections.shuffle(rotation, env.random);
                }
                Fault fault = injector.inject(rotation.remove(0));
                faults.add(fault);
                long recovery = awaitRecovery(fault);
                log.printf("[controller] %s: recovered in %s%n", fault,
                        recovery == Long.MAX_VALUE ? "NEVER" : recovery / 1000 + " ms");
                if (recovery == Long.MAX_VALUE) {
                    FaultDumps.threads(env, faults.size());
                } else if (controls != null) {
                    controls.act();
                }
                Thread.sleep(300 + env.random.nextInt(700));
            }
            long ended = FaultJournal.now();
            if (controls != null) {
                controls.disable(); // every worker stops with nothing held
            }
            Map<String, Object> endState = endState();
            history.refresh();
            history.died(env.deaths);
            try (Connection connection = env.connectForChecks()) {
                history.loadWrites(connection);
            }
            // kept beside the journals: the embedded server and its data are gone after the run
            Files.write(directory.resolve("accepted-writes.txt"), history.writes().stream()
                    .map(w -> w.id() + "\t" + w.name() + "\t" + w.fence() + "\t" + w.section() + "\t" + w.writtenAt())
                    .toList());
            FaultChecker checker = new FaultChecker(engine, scenario.leader(), history, faults, names,
                    env.recoveryBound().toNanos() / 1000, env.longestTtl().toNanos() / 1000);
            checker = scenario.transactions() ? checker.checkLiveness() : checker.check();
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("seconds", (ended - started) / 1_000_000);
            figures.put("workers x threads", options.workers() + " x "
                    + (scenario.leader() ? names.size() + " elections" : scenario.jobs() ? "a job" : options.threads()));
            figures.putAll(checker.figures);
            figures.put("end state", endState);
            List<String> violations = new ArrayList<>(checker.violations);
            if (controls != null) {
                try (Connection connection = env.connectForChecks()) {
                    JobChecker jobs = new JobChecker(history.all(), JobChecker.rows(connection), faults, env.deaths,
                            controls.requests(), started, ended).check();
                    figures.putAll(jobs.figures);
                    violations.addAll(jobs.violations);
                }
            }
            if (scenario.transactions()) {
                try (Connection connection = env.connectForChecks()) {
                    TransactionChecker commits = TransactionChecker.read(connection).check();
                    figures.putAll(commits.figures);
                    violations.addAll(commits.violations);
                }
            }
            if (env.cluster != null) {
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
            env.close();
        }
    }

    /** Waits until every hot name was acquired after the fault; returns the time that took, or MAX_VALUE. */
    private long awaitRecovery(Fault fault) throws InterruptedException {
        long give = env.recoveryBound().plusSeconds(5).toNanos();
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

    // --- end state (rule 5) ---

    /** Stops every worker and reads what is left: pinned connections, locks held, unexpired leases. */
    private Map<String, Object> endState() throws Exception {
        Map<String, Object> state = new LinkedHashMap<>();
        long pinned = 0;
        long held = 0;
        for (Slot slot : env.slots) {
            Map<?, ?> answer = env.stop(slot);
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
        try (Connection connection = env.connectForChecks()) {
            long namedHeld = 0;
            for (String name : names) {
                if (single(connection, "SELECT IS_USED_LOCK(?)", name) != null) {
                    namedHeld++;
                }
            }
            state.put("named locks held on the server", namedHeld);
            if (engine == LockMode.LEASE) {
                long lastDeath = env.deaths.values().stream().mapToLong(Long::longValue).max().orElse(0);
                if (env.cluster != null && !faults.isEmpty()) {
                    // a give-up refused by a node cut off from the others (1047) leaves its lease to end by itself
                    lastDeath = Math.max(lastDeath, faults.get(faults.size() - 1).healedAt());
                }
                long wait = lastDeath + env.longestTtl().toNanos() / 1000 + 200_000 - FaultJournal.now();
                if (wait > 0) {
                    TimeUnit.MICROSECONDS.sleep(wait);
                }
                // read on the node whose clock runs furthest ahead: a lease ends there no earlier than by its writer's
                try (Connection ahead = scenario.nodeAhead().isZero() ? null
                        : env.cluster.node(3).database().connect()) {
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
                        rs.getString(2), rs.getLong(3), rs.getString(4), rs.getString(5), rs.getString(6), env.deaths,
                        faults.isEmpty() ? "none" : faults.get(faults.size() - 1));
            }
        }
    }

    /** Rule 5: anything left at the end (a non-zero count, a worker named) is a violation. */
    private static void endStateViolations(Map<String, Object> state, List<String> violations) {
        state.forEach((key, value) -> {
            if (value instanceof Number number ? number.longValue() != 0 : value != null) {
                violations.add("End state: " + key + " = " + value);
            }
        });
    }

    /** Journals of an earlier run in the same directory would mix with this one's. */
    private void clearJournals() throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            // journals, worker logs and the dumps of an earlier run
            for (Path file : files.filter(f -> f.toString().endsWith(".tsv") || f.toString().contains(".log")
                    || f.getFileName().toString().contains("-after-fault-")).toList()) {
                Files.delete(file);
            }
        }
    }

    /** The JSON writer of the report ({@link FaultReport}). */
    static ObjectMapper json() {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }
}
