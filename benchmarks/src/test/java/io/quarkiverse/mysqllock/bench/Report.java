package io.quarkiverse.mysqllock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

/** Turns the processes' measurements into ratios, targets met or not, and the markdown table the README quotes. */
final class Report {

    static final String FLOOR_NAMED = "floor NAMED (raw GET_LOCK + RELEASE_LOCK)";
    static final String FLOOR_LEASE = "floor LEASE (raw take + give-up UPDATEs)";

    private Report() {
    }

    /** Scenario 2 from the two processes' journals: hand-off = next acquisition - previous release, in µs. */
    static Map<String, Object> handOffs(List<JsonNode> outputs) {
        List<long[]> cycles = new ArrayList<>();
        long statements = 0;
        long acquisitions = 0;
        List<String> failures = new ArrayList<>();
        String engine = null;
        for (int p = 0; p < outputs.size(); p++) {
            JsonNode output = outputs.get(p);
            engine = output.get("engine").asText();
            // Questions is server-wide and both windows overlap: the larger delta is the statements of both.
            statements = Math.max(statements, output.get("statements").asLong());
            acquisitions += output.get("acquisitions").asLong();
            for (JsonNode cycle : output.get("cycles")) {
                cycles.add(new long[] { cycle.get(0).asLong(), cycle.get(1).asLong(), p });
            }
            if (output.has("failure")) {
                failures.add(output.get("failure").asText());
            }
        }
        cycles.sort(Benchmarks.BY_ACQUISITION);
        long[] all = new long[Math.max(0, cycles.size() - 1)];
        List<Long> cross = new ArrayList<>();
        for (int i = 1; i < cycles.size(); i++) {
            long gap = Math.max(0, cycles.get(i)[0] - cycles.get(i - 1)[1]);
            all[i - 1] = gap;
            if (cycles.get(i)[2] != cycles.get(i - 1)[2]) {
                cross.add(gap);
            }
        }
        Arrays.sort(all);
        long[] crossSorted = cross.stream().mapToLong(Long::longValue).sorted().toArray();
        double seconds = cycles.isEmpty() ? 0 : (cycles.get(cycles.size() - 1)[1] - cycles.get(0)[0]) / 1e6;
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("engine", engine);
        result.put("acquisitions", acquisitions);
        result.put("opsPerSecond", seconds > 0 ? acquisitions / seconds : 0);
        result.put("handOffP50Micros", Runner.percentile(all, 0.5));
        result.put("handOffP99Micros", Runner.percentile(all, 0.99));
        result.put("crossProcessHandOffs", crossSorted.length);
        result.put("crossProcessHandOffP50Micros", Runner.percentile(crossSorted, 0.5));
        result.put("crossProcessHandOffP99Micros", Runner.percentile(crossSorted, 0.99));
        result.put("statementsPerSecond", seconds > 0 ? statements / seconds : 0);
        result.put("statementsPerAcquisition", acquisitions > 0 ? (double) statements / acquisitions : 0);
        result.put("failures", failures);
        return result;
    }

    static String markdown(JsonNode report) {
        StringBuilder md = new StringBuilder();
        JsonNode machine = report.get("machine");
        md.append("Run ").append(report.get("started").asText()).append(" on ").append(machine.get("cores").asInt())
                .append(" cores (").append(machine.get("cpu").asText()).append("), ").append(machine.get("java").asText())
                .append(", ").append(machine.get("database").asText()).append("; Redis: ")
                .append(report.get("redis").asText()).append(". ").append(report.get("settings").get("rounds").asText())
                .append(" interleaved rounds of ").append(report.get("settings").get("secondsPerRound").asText())
                .append(" s per subject; throughput is the median round.\n\n");

        JsonNode scenarios = report.get("scenarios");
        md.append("### 1. Uncontended acquire + release, distinct names\n\n");
        md.append("Server CPU is the CPU time the database's (or Redis's) process used per acquire + release: on a server"
                + " shared by many instances, that is what limits them all.\n\n");
        md.append("| subject | threads | ops/s | × floor NAMED | p50 µs | p99 µs | server CPU µs per op |\n"
                + "|---|---:|---:|---:|---:|---:|---:|\n");
        scenarios.get("uncontended").fields().forEachRemaining(byThreads -> {
            double floor = byThreads.getValue().get(FLOOR_NAMED).get("opsPerSecond").asDouble();
            byThreads.getValue().fields().forEachRemaining(subject -> md.append(row(subject.getKey(),
                    subject.getValue(), floor, true)));
        });
        md.append("\n### 4. `@Locked` on an empty method, 1 thread\n\n");
        md.append("| subject | threads | ops/s | × floor NAMED | p50 µs | p99 µs |\n|---|---:|---:|---:|---:|---:|\n");
        double floor4 = scenarios.get("locked").get(FLOOR_NAMED).get("opsPerSecond").asDouble();
        for (String scenario : List.of("locked", "locked nested")) {
            scenarios.get(scenario).fields().forEachRemaining(subject -> md.append(row(subject.getKey(),
                    subject.getValue(), floor4, false)));
        }

        md.append("\n### 2. Contended: 2 processes × 16 threads on one name\n\n");
        md.append("| engine | acquisitions/s | hand-off p50 µs | p99 µs | cross-process hand-offs | their p50 µs | p99 µs |"
                + " statements/s | statements per acquisition |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String engine : List.of("named", "lease")) {
            JsonNode c = report.get("contended " + engine);
            md.append(String.format(Locale.ROOT, "| %s | %.0f | %d | %d | %d | %d | %d | %.0f | %.2f |%n",
                    c.get("engine").asText(), c.get("opsPerSecond").asDouble(), c.get("handOffP50Micros").asLong(),
                    c.get("handOffP99Micros").asLong(), c.get("crossProcessHandOffs").asLong(),
                    c.get("crossProcessHandOffP50Micros").asLong(), c.get("crossProcessHandOffP99Micros").asLong(),
                    c.get("statementsPerSecond").asDouble(), c.get("statementsPerAcquisition").asDouble()));
        }

        md.append("\n### 3. Many held: one JVM holds many distinct locks at once\n\n");
        md.append("| engine | locks | threads | held | still valid after 2 renewal periods |"
                + " connections kept out of the pool | heap bytes per lock | statements/s while holding |"
                + " statements per renewal period | failure |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (String engine : List.of("named", "lease")) {
            JsonNode h = report.get("hold-many " + engine);
            long heap = h.get("heapBytesPerLock").asLong();
            md.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %s | %s | %.1f | %s | %s |%n",
                    h.get("engine").asText(), h.get("locks").asLong(), h.get("threads").asLong(), h.get("held").asLong(),
                    h.get("validAfterWindow").asLong(), h.has("pinnedConnections") ? h.get("pinnedConnections").asText() : "0",
                    heap >= 0 ? String.valueOf(heap) : "not measurable (heap shrank)", h.get("statementsPerSecond").asDouble(),
                    h.get("statementsPerRenewalPeriod").isNull() ? "-"
                            : String.format(Locale.ROOT, "%.1f", h.get("statementsPerRenewalPeriod").asDouble()),
                    h.has("failure") ? h.get("failure").asText().replace("|", "/") : ""));
        }

        md.append("\n### Targets\n\n| target | measured | met |\n|---|---|---|\n");
        for (String[] target : targets(report)) {
            md.append("| ").append(target[0]).append(" | ").append(target[1]).append(" | ").append(target[2]).append(" |\n");
        }
        return md.toString();
    }

    private static String row(String subject, JsonNode r, double floor, boolean serverCpu) {
        String row = String.format(Locale.ROOT, "| %s | %d | %.0f | %.2f | %.0f | %.0f |", subject,
                r.get("threads").asInt(), r.get("opsPerSecond").asDouble(), r.get("opsPerSecond").asDouble() / floor,
                r.get("p50Micros").asDouble(), r.get("p99Micros").asDouble());
        return serverCpu ? row + String.format(Locale.ROOT, " %.0f |%n", r.path("serverCpuMicrosPerOp").asDouble())
                : row + "\n";
    }

    static List<String[]> targets(JsonNode report) {
        List<String[]> targets = new ArrayList<>();
        JsonNode uncontended = report.get("scenarios").get("uncontended");
        for (String threads : List.of("1", "16")) {
            JsonNode s = uncontended.get(threads);
            double named = ops(s, "NAMED engine");
            double lease = ops(s, "LEASE engine");
            ratio(targets, "NAMED ≥ 0.9 × its floor, " + threads + " thread(s)", named, ops(s, FLOOR_NAMED), 0.9);
            ratio(targets, "LEASE ≥ 0.8 × its floor, " + threads + " thread(s)", lease, ops(s, FLOOR_LEASE), 0.8);
            if (threads.equals("16")) {
                // group commit: more than a statement per operation can give
                ratio(targets, "LEASE ≥ 1.5 × its floor, 16 threads", lease, ops(s, FLOOR_LEASE), 1.5);
            }
            for (String peer : List.of("ShedLock", "Spring")) {
                double peerOps = opsStartingWith(s, peer);
                ratio(targets, "NAMED ≥ 2 × " + peer + ", " + threads + " thread(s)", named, peerOps, 2);
                // Alone, a lease costs ShedLock's two statements: its floor, and no more, is the target there.
                double leaseAtLeast = peer.equals("ShedLock") && threads.equals("1") ? 1.0 : 2;
                ratio(targets, "LEASE ≥ " + (leaseAtLeast == 1.0 ? "1.0" : "2") + " × " + peer + ", " + threads
                        + " thread(s)", lease, peerOps, leaseAtLeast);
            }
            double leaseCpu = s.get("LEASE engine").path("serverCpuMicrosPerOp").asDouble();
            double shedLockCpu = s.get(nameStartingWith(s, "ShedLock")).path("serverCpuMicrosPerOp").asDouble();
            targets.add(new String[] { "LEASE server CPU per op ≤ 0.5 × ShedLock's, " + threads + " thread(s)",
                    String.format(Locale.ROOT, "%.2f × (%.0f vs %.0f µs)", leaseCpu / shedLockCpu, leaseCpu, shedLockCpu),
                    threads.equals("1") ? "not expected alone (the same two statements)"
                            : leaseCpu <= 0.5 * shedLockCpu ? "yes" : "**no**" });
            double redisson = opsStartingWith(s, "Redisson");
            if (redisson > 0) {
                ratio(targets, "NAMED ≥ 1.0 × Redisson, " + threads + " thread(s)", named, redisson, 1.0);
            } else {
                targets.add(new String[] { "NAMED ≥ 1.0 × Redisson, " + threads + " thread(s)", "Redis unavailable",
                        "not measured" });
            }
        }
        JsonNode locked = report.get("scenarios").get("locked");
        // The overhead is the interceptor's own time per call, measured on nested holds (no round trip, so no database
        // noise), as a share of a whole withLock cycle. End to end, paired round by round, for comparison.
        JsonNode nested = report.get("scenarios").get("locked nested");
        double extraNanos = 1e9 / ops(nested, "@Locked (NAMED), nested") - 1e9 / ops(nested, "withLock (NAMED), nested");
        double share = extraNanos / (1e9 / ops(locked, "withLock (NAMED)"));
        double pairedRatio = pairedRatio(locked, "@Locked (NAMED)", "withLock (NAMED)");
        targets.add(new String[] { "`@Locked` overhead ≤ 5 % over `withLock` (NAMED)",
                String.format(Locale.ROOT, "%.1f %% (%.0f ns per call more than `withLock`, on nested holds, of a %.0f µs"
                        + " `withLock` cycle); end to end %.2f × (median of %d paired rounds)", share * 100, extraNanos,
                        1e6 / ops(locked, "withLock (NAMED)"), pairedRatio,
                        locked.get("withLock (NAMED)").get("roundsOpsPerSecond").size()),
                share <= 0.05 ? "yes" : "**no**" });
        long namedHandOff = report.get("contended named").get("handOffP50Micros").asLong();
        long leaseHandOff = report.get("contended lease").get("handOffP50Micros").asLong();
        targets.add(
                new String[] { "hand-off p50 NAMED ≤ 2 ms", namedHandOff + " µs", namedHandOff <= 2000 ? "yes" : "**no**" });
        targets.add(
                new String[] { "hand-off p50 LEASE ≤ 20 ms", leaseHandOff + " µs", leaseHandOff <= 20000 ? "yes" : "**no**" });
        JsonNode named = report.get("hold-many named");
        long pinned = named.get("pinnedConnections").asLong();
        boolean allHeld = named.get("held").asLong() == named.get("locks").asLong();
        targets.add(new String[] { "NAMED holds " + named.get("locks").asLong() + " locks on ≤ 16 connections",
                named.get("held").asLong() + " held by " + named.get("threads").asLong() + " threads on " + pinned
                        + " pinned connections",
                allHeld && pinned <= 16 ? "yes" : "**no**" });
        JsonNode lease = report.get("hold-many lease");
        double perPeriod = lease.get("statementsPerRenewalPeriod").asDouble();
        targets.add(new String[] { "LEASE renews " + lease.get("locks").asLong() + " leases with ≤ 10 statements per period",
                String.format(Locale.ROOT, "%.1f (%d of %d still valid, ttl %d s)", perPeriod,
                        lease.get("validAfterWindow").asLong(), lease.get("locks").asLong(), lease.get("ttlSeconds").asLong()),
                perPeriod <= 10 && lease.get("validAfterWindow").asLong() == lease.get("locks").asLong() ? "yes"
                        : "**no**" });
        return targets;
    }

    private static void ratio(List<String[]> targets, String name, double value, double baseline, double atLeast) {
        double ratio = baseline > 0 ? value / baseline : 0;
        targets.add(new String[] { name, String.format(Locale.ROOT, "%.2f × (%.0f vs %.0f ops/s)", ratio, value, baseline),
                ratio >= atLeast ? "yes" : "**no**" });
    }

    private static double pairedRatio(JsonNode scenario, String subject, String baseline) {
        JsonNode a = scenario.get(subject).get("roundsOpsPerSecond");
        JsonNode b = scenario.get(baseline).get("roundsOpsPerSecond");
        double[] ratios = new double[Math.min(a.size(), b.size())];
        for (int i = 0; i < ratios.length; i++) {
            ratios[i] = a.get(i).asDouble() / b.get(i).asDouble();
        }
        java.util.Arrays.sort(ratios);
        return ratios.length == 0 ? 0 : ratios[ratios.length / 2];
    }

    private static double ops(JsonNode scenario, String subject) {
        JsonNode node = scenario.get(subject);
        return node == null ? 0 : node.get("opsPerSecond").asDouble();
    }

    private static double opsStartingWith(JsonNode scenario, String prefix) {
        String name = nameStartingWith(scenario, prefix);
        return name == null ? 0 : ops(scenario, name);
    }

    private static String nameStartingWith(JsonNode scenario, String prefix) {
        var names = scenario.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (name.startsWith(prefix)) {
                return name;
            }
        }
        return null;
    }
}
