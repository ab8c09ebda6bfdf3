package io.quarkiverse.mysqllock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * Runs the scale curves' processes and measures what only the controller sees: the server's statements and CPU while
 * several processes run, and the journals of them all merged.
 */
final class CurveRuns {

    /** The waiters on one hot name, over at most this many processes. */
    static final int WAIT_PROCESSES = 4;

    private final Path app;
    private final Path work;
    private final Map<String, String> base;
    private final TestDatabase db;

    CurveRuns(Path app, Path work, Map<String, String> base, TestDatabase db) {
        this.app = app;
        this.work = work;
        this.base = base;
        this.db = db;
    }

    /** The held-locks curve of one engine, in one process. */
    JsonNode hold(String engine) throws IOException {
        Map<String, String> properties = new LinkedHashMap<>(base);
        properties.put("bench.role", "hold-curve");
        properties.put("bench.engine", engine);
        return Benchmarks.run(app, work, "hold-curve-" + engine, properties);
    }

    /**
     * The waiters curve of one engine: for each count, that many threads over at most {@value #WAIT_PROCESSES}
     * processes take one name in turn for {@code seconds}.
     */
    Map<String, Object> waiters(String engine, int[] counts, double seconds) throws Exception {
        Map<String, Object> curve = new LinkedHashMap<>();
        for (int count : counts) {
            int processes = Math.min(WAIT_PROCESSES, count);
            Path go = work.resolve("go-wait-" + engine + "-" + count);
            List<AppProcess> started = new ArrayList<>();
            List<JsonNode> outputs = new ArrayList<>();
            try {
                for (int p = 0; p < processes; p++) {
                    Map<String, String> properties = small(engine, go);
                    properties.put("bench.role", "wait");
                    properties.put("bench.seconds", String.valueOf(seconds));
                    properties.put("bench.wait.threads", String.valueOf(count / processes + (p < count % processes ? 1 : 0)));
                    started.add(Benchmarks.start(app, work, name("wait", engine, count, p), properties));
                }
                for (AppProcess process : started) {
                    process.awaitLine(line -> line.contains("benchmark process ready"), Duration.ofMinutes(2));
                }
                ServerUse before = ServerUse.now(db);
                Files.createFile(go);
                for (int p = 0; p < processes; p++) {
                    outputs.add(Benchmarks.finish(started.get(p), work, name("wait", engine, count, p)));
                }
                ServerUse used = ServerUse.now(db).since(before);
                curve.put(String.valueOf(count), waitPoint(outputs, used));
            } finally {
                started.forEach(AppProcess::close);
            }
        }
        return curve;
    }

    /** Hand-offs, waits, fairness and the server's statements of one point of the waiters curve. */
    private static Map<String, Object> waitPoint(List<JsonNode> outputs, ServerUse used) {
        List<long[]> cycles = new ArrayList<>();
        List<Integer> perThread = new ArrayList<>();
        int connections = 0;
        List<String> failures = new ArrayList<>();
        for (JsonNode output : outputs) {
            for (JsonNode cycle : output.get("cycles")) {
                cycles.add(new long[] { cycle.get(0).asLong(), cycle.get(1).asLong(), cycle.get(2).asLong() });
            }
            output.get("perThread").forEach(n -> perThread.add(n.asInt()));
            connections += output.get("mostConnectionsOutOfPool").asInt();
            if (output.has("failure")) {
                failures.add(output.get("failure").asText());
            }
        }
        cycles.sort((a, b) -> Long.compare(a[1], b[1]));
        long[] handOffs = new long[Math.max(0, cycles.size() - 1)];
        for (int i = 1; i < cycles.size(); i++) {
            handOffs[i - 1] = Math.max(0, cycles.get(i)[1] - cycles.get(i - 1)[2]);
        }
        long[] waits = cycles.stream().mapToLong(c -> c[1] - c[0]).sorted().toArray();
        Arrays.sort(handOffs);
        int[] counts = perThread.stream().mapToInt(Integer::intValue).sorted().toArray();
        double sum = Arrays.stream(counts).asDoubleStream().sum();
        double squares = Arrays.stream(counts).asDoubleStream().map(x -> x * x).sum();
        Map<String, Object> point = new LinkedHashMap<>();
        point.put("processes", outputs.size());
        point.put("acquisitions", cycles.size());
        point.put("acquisitionsPerSecond", cycles.size() / used.seconds());
        point.put("statementsPerSecond", used.statements() / used.seconds());
        point.put("serverCpuPercent", 100.0 * used.cpuSeconds() / used.seconds());
        point.put("connectionsOutOfPool", connections);
        point.put("handOffP50Micros", Runner.percentile(handOffs, 0.5));
        point.put("handOffP99Micros", Runner.percentile(handOffs, 0.99));
        point.put("waitP50Micros", Runner.percentile(waits, 0.5));
        point.put("waitP99Micros", Runner.percentile(waits, 0.99));
        point.put("acquisitionsPerThreadMin", counts.length == 0 ? 0 : counts[0]);
        point.put("acquisitionsPerThreadMedian", counts.length == 0 ? 0 : counts[counts.length / 2]);
        point.put("acquisitionsPerThreadMax", counts.length == 0 ? 0 : counts[counts.length - 1]);
        // Jain's index: 1 when every thread got as many turns, 1/n when one got them all
        point.put("fairnessIndex", squares == 0 ? 0 : sum * sum / (counts.length * squares));
        point.put("failures", failures);
        return point;
    }

    /**
     * The instances curve of one engine: for each count, that many processes hold {@code locks} locks each while the
     * server's statements and CPU are measured over {@code window}.
     */
    Map<String, Object> instances(String engine, int[] counts, int locks, Duration window) throws Exception {
        Map<String, Object> curve = new LinkedHashMap<>();
        for (int count : counts) {
            Path stop = work.resolve("stop-instances-" + engine + "-" + count);
            List<AppProcess> started = new ArrayList<>();
            List<JsonNode> outputs = new ArrayList<>();
            try {
                for (int p = 0; p < count; p++) {
                    Map<String, String> properties = small(engine, stop);
                    properties.put("bench.role", "instance");
                    properties.put("bench.instance.id", engine + "-" + count + "-" + p);
                    properties.put("bench.instance.locks", String.valueOf(locks));
                    started.add(Benchmarks.start(app, work, name("instance", engine, count, p), properties));
                }
                for (AppProcess process : started) {
                    process.awaitLine(line -> line.contains("benchmark process holding"), Duration.ofMinutes(3));
                }
                ServerUse before = ServerUse.now(db);
                TimeUnit.NANOSECONDS.sleep(window.toNanos());
                ServerUse used = ServerUse.now(db).since(before);
                Files.createFile(stop);
                long valid = 0;
                for (int p = 0; p < count; p++) {
                    JsonNode output = Benchmarks.finish(started.get(p), work, name("instance", engine, count, p));
                    outputs.add(output);
                    valid += output.get("validAtTheEnd").asLong();
                }
                Map<String, Object> point = new LinkedHashMap<>();
                point.put("instances", count);
                point.put("locksHeld", (long) count * locks);
                point.put("validAtTheEnd", valid);
                point.put("statementsPerSecond", used.statements() / used.seconds());
                point.put("statementsPerSecondPerInstance", used.statements() / used.seconds() / count);
                point.put("serverCpuPercent", 100.0 * used.cpuSeconds() / used.seconds());
                point.put("serverCpuPercentPerInstance", 100.0 * used.cpuSeconds() / used.seconds() / count);
                curve.put(String.valueOf(count), point);
            } finally {
                started.forEach(AppProcess::close);
            }
        }
        return curve;
    }

    /** The lock table with a million rows, and its purge. */
    JsonNode table(int rows) throws IOException {
        Map<String, String> properties = new LinkedHashMap<>(base);
        properties.put("bench.role", "table");
        properties.put("bench.table.rows", String.valueOf(rows));
        return Benchmarks.run(app, work, "table-curve", properties);
    }

    /** A process with a small pool: many run at once, and the server accepts 1,000 connections in all. */
    private Map<String, String> small(String engine, Path file) {
        Map<String, String> properties = new LinkedHashMap<>(base);
        properties.put("bench.engine", engine);
        properties.put("bench.go", file.toString());
        properties.put("quarkus.datasource.jdbc.min-size", "0");
        properties.put("quarkus.datasource.jdbc.initial-size", "0");
        properties.put("quarkus.datasource.jdbc.max-size", "40");
        // sixteen JVMs starting at once on two cores open their first connections slowly
        properties.put("quarkus.mysql-lock.connection-wait", "60s");
        return properties;
    }

    private static String name(String role, String engine, int count, int process) {
        return role + "-" + engine + "-" + count + "-" + process;
    }

    /** The server's statements so far and the CPU its process used, at a moment. */
    record ServerUse(long nanos, long statements, double cpuSeconds) {

        static ServerUse now(TestDatabase db) throws SQLException {
            long statements;
            try (Connection connection = db.connect();
                    Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
                            + " WHERE VARIABLE_NAME = 'QUESTIONS'")) {
                rs.next();
                statements = rs.getLong(1);
            }
            double cpu = ProcessHandle.current().descendants()
                    .filter(process -> process.info().command().orElse("").endsWith("mariadbd"))
                    .mapToLong(process -> process.info().totalCpuDuration().orElse(Duration.ZERO).toNanos()).sum() / 1e9;
            return new ServerUse(System.nanoTime(), statements, cpu);
        }

        /** What was used between {@code earlier} and this moment. */
        ServerUse since(ServerUse earlier) {
            return new ServerUse(nanos - earlier.nanos, statements - earlier.statements, cpuSeconds - earlier.cpuSeconds);
        }

        double seconds() {
            return nanos / 1e9;
        }
    }
}
