package io.quarkiverse.mysqllock.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkiverse.mysqllock.test.AppProcess;

/**
 * The coordination primitives' benchmarks: semaphore throughput beside the NAMED floor and Redisson's
 * {@code RSemaphore}, and the time a new leader takes after the leader process is killed.
 */
final class CoordinationRuns {

    private final Path app;
    private final Path work;
    private final Map<String, String> base;

    CoordinationRuns(Path app, Path work, Map<String, String> base) {
        this.app = app;
        this.work = work;
        this.base = base;
    }

    JsonNode semaphores(Benchmarks.Redis redis) throws IOException {
        Map<String, String> properties = new LinkedHashMap<>(base);
        properties.put("bench.role", "semaphore");
        redis.address().ifPresent(address -> properties.put("bench.redis", address));
        return Benchmarks.run(app, work, "semaphore", properties);
    }

    /**
     * Two processes join one election; the leader is SIGKILLed at a random moment once the standby has been there for
     * longer than a lease, and the time until the other says it leads is measured (both clocks are this host's); a new
     * standby replaces the killed one, {@code rounds} times.
     */
    Map<String, Object> failover(String engine, int rounds) throws Exception {
        List<AppProcess> processes = new ArrayList<>();
        Map<AppProcess, Integer> seen = new LinkedHashMap<>();
        List<Long> millis = new ArrayList<>();
        int started = 0;
        try {
            for (; started < 2; started++) {
                processes.add(standby(engine, started, seen));
            }
            AppProcess leader = awaitLeader(processes, seen).process();
            Random phase = new Random(20261126);
            for (int round = 0; round < rounds; round++) {
                // As in a running fleet: the standby has watched the leader's lease for longer than a lease, and the
                // kill falls anywhere in the leader's renewal period (a third of the ttl). Killed the moment its
                // successor joined, the successor's first look would be the kill: under observed expiry, the worst
                // case, a lease and its margin from then (3.26 s, constant, in every round).
                long ttl = BenchMain.LEASE_TTL.toMillis();
                Thread.sleep(ttl + phase.nextInt((int) (ttl / 3)));
                long killedAt = BenchMain.micros();
                leader.kill();
                processes.remove(leader);
                Leader next = awaitLeader(processes, seen);
                millis.add((next.at() - killedAt) / 1000);
                leader = next.process();
                processes.add(standby(engine, started++, seen));
            }
        } finally {
            processes.forEach(AppProcess::close);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("engine", engine.toUpperCase(Locale.ROOT));
        result.put("failoverMillis", millis);
        result.put("medianMillis", millis.stream().sorted().toList().get(millis.size() / 2));
        result.put("maxMillis", millis.stream().mapToLong(Long::longValue).max().orElse(0));
        result.put("leaseTtlMillis", engine.equals("lease") ? BenchMain.LEASE_TTL.toMillis() : null);
        return result;
    }

    private AppProcess standby(String engine, int index, Map<AppProcess, Integer> seen) {
        Map<String, String> properties = new LinkedHashMap<>(base);
        properties.put("bench.role", "leader");
        properties.put("bench.engine", engine);
        properties.put("bench.instance.id", engine + "-" + index);
        // the hand-over itself; by default a NAMED term begins two keepalive intervals after its grant
        properties.put("quarkus.mysql-lock.named.instant-leader-hand-over", "true");
        AppProcess process = Benchmarks.start(app, work, "leader-" + engine + "-" + index, properties);
        process.awaitLine(line -> line.startsWith("BENCH-JOINED"), Duration.ofSeconds(90));
        seen.put(process, 0);
        return process;
    }

    private record Leader(AppProcess process, long at) {
    }

    /** The first process to say it leads after the lines already seen; polls their output. */
    private static Leader awaitLeader(List<AppProcess> processes, Map<AppProcess, Integer> seen) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            for (AppProcess process : processes) {
                List<String> lines = process.lines();
                int from = seen.getOrDefault(process, 0);
                for (int i = from; i < lines.size(); i++) {
                    String line = lines.get(i);
                    if (line.startsWith(LeaderProbe.LINE)) {
                        seen.put(process, i + 1);
                        return new Leader(process, Long.parseLong(line.substring(line.lastIndexOf(' ') + 1)));
                    }
                }
                seen.put(process, lines.size());
            }
            Thread.sleep(5);
        }
        throw new IllegalStateException("No leader within 60 s");
    }

    /** The markdown of the coordination benchmarks. */
    static String markdown(JsonNode semaphores, List<Map<String, Object>> failovers) {
        StringBuilder md = new StringBuilder("## Semaphore: a permit acquired and released\n\n");
        md.append("Each semaphore has as many permits as threads, so a thread always finds one free: the cost of a permit,"
                + " not a wait. Ratios against the NAMED floor (GET_LOCK + RELEASE_LOCK sent raw) of the same run.\n\n");
        for (var threads : iterable(semaphores.fieldNames())) {
            JsonNode subjects = semaphores.get(threads);
            double floor = subjects.elements().next().get("opsPerSecond").asDouble();
            md.append("| ").append(threads).append(" thread(s) | ops/s | x floor | p50 us | p99 us |\n|---|---|---|---|---|\n");
            for (var name : iterable(subjects.fieldNames())) {
                JsonNode r = subjects.get(name);
                md.append(String.format(Locale.ROOT, "| %s | %,.0f | %.2f | %.0f | %.0f |%n", name,
                        r.get("opsPerSecond").asDouble(), r.get("opsPerSecond").asDouble() / floor,
                        r.get("p50Micros").asDouble(), r.get("p99Micros").asDouble()));
            }
            md.append('\n');
        }
        md.append(
                "## Leader failover: the leader process SIGKILLed\n\n| engine | failovers (ms) | median | max |\n|---|---|---|---|\n");
        for (Map<String, Object> f : failovers) {
            md.append("| ").append(f.get("engine")).append(f.get("leaseTtlMillis") == null ? ""
                    : " (ttl " + f.get("leaseTtlMillis") + " ms)").append(" | ").append(f.get("failoverMillis"))
                    .append(" | ").append(f.get("medianMillis")).append(" | ").append(f.get("maxMillis")).append(" |\n");
        }
        md.append("\nCurator's leader latch, for comparison, hands over when ZooKeeper expires the dead leader's session:"
                + " its session timeout, 60 s by default in Curator (no ZooKeeper on this machine to measure it).\n");
        return md.toString();
    }

    private static <T> Iterable<T> iterable(java.util.Iterator<T> iterator) {
        return () -> iterator;
    }
}
