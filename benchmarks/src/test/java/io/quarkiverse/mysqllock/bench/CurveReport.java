package io.quarkiverse.mysqllock.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

/** The scale curves in the report: a table and a chart each, and whether each curve meets its target. */
final class CurveReport {

    private static final List<String> ENGINES = List.of("named", "lease");

    private final JsonNode curves;
    private final Path results;
    private final StringBuilder md = new StringBuilder();
    private final List<String[]> targets = new ArrayList<>();

    private CurveReport(JsonNode curves, Path results) {
        this.curves = curves;
        this.results = results;
    }

    /** The curves' section of the report; the charts go to {@code results} beside it. */
    static String markdown(JsonNode curves, Path results) throws IOException {
        CurveReport report = new CurveReport(curves, results);
        report.hold();
        report.waiters();
        report.instances();
        report.table();
        report.md.append("\n### Targets of the curves\n\n| target | measured | met |\n|---|---|---|\n");
        for (String[] target : report.targets) {
            report.md.append("| ").append(target[0]).append(" | ").append(target[1]).append(" | ").append(target[2])
                    .append(" |\n");
        }
        return report.md.toString();
    }

    private void hold() throws IOException {
        md.append("\n### 5. Held locks per instance: 10² to 10⁵\n\n");
        md.append("One process holds n distinct locks (taken by 100 threads), then acquires 500 more, one at a time, while"
                + " they are held. Statements per second while holding are counted over two periods of the engine's"
                + " periodic work (keepalive 10 s, lease renewal 10 s).\n\n");
        md.append("| engine | locks held | acquire p50 µs | p99 µs | connections out of the pool | heap bytes per lock |"
                + " statements/s while holding | still valid | fill s |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        Charts.Lines latency = new Charts.Lines();
        Charts.Lines statements = new Charts.Lines();
        Charts.Lines heap = new Charts.Lines();
        for (String engine : ENGINES) {
            JsonNode curve = curves.get("hold " + engine);
            forEachPoint(curve, (key, n, p) -> {
                md.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.0f | %d | %s | %.2f | %d of %d | %.1f |%n",
                        engine.toUpperCase(Locale.ROOT), key, p.get("acquireP50Micros").asDouble(),
                        p.get("acquireP99Micros").asDouble(), p.get("connectionsOutOfPool").asInt(),
                        heapPerLock(p.get("heapBytesPerLock").asLong()), p.get("statementsPerSecondWhileHolding").asDouble(),
                        p.get("validAfterWindow").asLong(), p.get("held").asLong(), p.get("fillSeconds").asDouble()));
                latency.add(engine.toUpperCase(Locale.ROOT) + " p50", n, p.get("acquireP50Micros").asDouble());
                latency.add(engine.toUpperCase(Locale.ROOT) + " p99", n, p.get("acquireP99Micros").asDouble());
                statements.add(engine.toUpperCase(Locale.ROOT), n, p.get("statementsPerSecondWhileHolding").asDouble());
                heap.add(engine.toUpperCase(Locale.ROOT), n, Math.max(0, p.get("heapBytesPerLock").asDouble()));
            });
            flat("acquisition latency (p50) with " + first(curve) + " and with " + last(curve) + " locks held, "
                    + engine.toUpperCase(Locale.ROOT), value(curve, first(curve), "acquireP50Micros"),
                    value(curve, last(curve), "acquireP50Micros"), "µs", 1.2);
        }
        chart("hold-latency.png", "Acquisition latency while n locks are held", "locks held", "µs", latency, true);
        chart("hold-statements.png", "Statements per second while holding", "locks held", "statements/s", statements,
                true);
        chart("hold-heap.png", "Heap per lock held", "locks held", "bytes", heap, false);
        JsonNode named = curves.get("hold named");
        targets.add(new String[] { "NAMED statements/s while holding grow with connections, not locks held",
                String.format(Locale.ROOT, "%.2f/s with %s locks on %d connections, %.2f/s with %s on %d",
                        value(named, first(named), "statementsPerSecondWhileHolding"), first(named),
                        named.get(first(named)).get("connectionsOutOfPool").asInt(),
                        value(named, last(named), "statementsPerSecondWhileHolding"), last(named),
                        named.get(last(named)).get("connectionsOutOfPool").asInt()),
                value(named, last(named), "statementsPerSecondWhileHolding") <= 2 + named.get(last(named))
                        .get("connectionsOutOfPool").asInt() / 5.0 ? "yes" : "**no**" });
        JsonNode lease = curves.get("hold lease");
        targets.add(new String[] { "LEASE statements/s while holding grow with connections, not locks held",
                String.format(Locale.ROOT, "%.2f/s with %s leases, %.2f/s with %s: one renewal statement per 2,000"
                        + " leases per period", value(lease, first(lease), "statementsPerSecondWhileHolding"),
                        first(lease), value(lease, last(lease), "statementsPerSecondWhileHolding"), last(lease)),
                "**no**: grows with leases / 2,000" });
        md.append("\n![latency](hold-latency.png)\n![statements](hold-statements.png)\n![heap](hold-heap.png)\n");
    }

    private void waiters() throws IOException {
        md.append("\n### 6. Waiters on one hot name: 1 to 1,000 threads over 4 processes\n\n");
        md.append("Every thread takes the name, holds it 200 µs and releases it, again and again for 10 s. Hand-off: from"
                + " a release to the next grant, whichever process. Fairness: Jain's index of the acquisitions per thread"
                + " (1: all equal).\n\n");
        md.append("| engine | waiting threads | processes | acquisitions/s | statements/s | server CPU % |"
                + " connections out of the pool | hand-off p50 µs | p99 µs | wait p50 ms | p99 ms |"
                + " acquisitions per thread min / median / max | fairness |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
        Charts.Lines statements = new Charts.Lines();
        Charts.Lines handOffs = new Charts.Lines();
        Charts.Lines connections = new Charts.Lines();
        for (String engine : ENGINES) {
            JsonNode curve = curves.get("waiters " + engine);
            String e = engine.toUpperCase(Locale.ROOT);
            forEachPoint(curve, (key, n, p) -> {
                md.append(String.format(Locale.ROOT, "| %s | %s | %d | %.0f | %.0f | %.0f | %d | %d | %d | %.1f | %.1f |"
                        + " %d / %d / %d | %.2f |%n", e, key, p.get("processes").asInt(),
                        p.get("acquisitionsPerSecond").asDouble(), p.get("statementsPerSecond").asDouble(),
                        p.get("serverCpuPercent").asDouble(), p.get("connectionsOutOfPool").asInt(),
                        p.get("handOffP50Micros").asLong(), p.get("handOffP99Micros").asLong(),
                        p.get("waitP50Micros").asLong() / 1000.0, p.get("waitP99Micros").asLong() / 1000.0,
                        p.get("acquisitionsPerThreadMin").asInt(), p.get("acquisitionsPerThreadMedian").asInt(),
                        p.get("acquisitionsPerThreadMax").asInt(), p.get("fairnessIndex").asDouble()));
                statements.add(e, n, p.get("statementsPerSecond").asDouble());
                handOffs.add(e + " p50", n, p.get("handOffP50Micros").asDouble());
                handOffs.add(e + " p99", n, p.get("handOffP99Micros").asDouble());
                connections.add(e, n, p.get("connectionsOutOfPool").asDouble());
            });
            String few = curve.has("10") ? "10" : first(curve);
            flat("statements/s with " + last(curve) + " waiting threads and with " + few + ", " + e + " (waiters of one"
                    + " name)", value(curve, few, "statementsPerSecond"), value(curve, last(curve), "statementsPerSecond"),
                    "/s", 1.5);
        }
        chart("waiters-statements.png", "Statements per second, waiters of one name", "waiting threads",
                "statements/s", statements, true);
        chart("waiters-handoff.png", "Hand-off latency, waiters of one name", "waiting threads", "µs", handOffs, true);
        chart("waiters-connections.png", "Connections out of the pool, waiters of one name", "waiting threads",
                "connections", connections, false);
        md.append("\n![statements](waiters-statements.png)\n![hand-off](waiters-handoff.png)\n"
                + "![connections](waiters-connections.png)\n");
    }

    private void instances() throws IOException {
        md.append("\n### 7. Instances on one database: 1, 4, 16 processes holding and renewing\n\n");
        md.append("Each process holds 100 locks; the server's statements and CPU are measured over 20 s.\n\n");
        md.append("| engine | instances | locks held | statements/s | per instance | server CPU % | per instance |"
                + " still valid |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
        Charts.Lines perInstance = new Charts.Lines();
        Charts.Lines cpu = new Charts.Lines();
        for (String engine : ENGINES) {
            JsonNode curve = curves.get("instances " + engine);
            String e = engine.toUpperCase(Locale.ROOT);
            forEachPoint(curve, (key, n, p) -> {
                md.append(String.format(Locale.ROOT, "| %s | %s | %d | %.1f | %.2f | %.2f | %.3f | %d |%n", e,
                        key, p.get("locksHeld").asLong(), p.get("statementsPerSecond").asDouble(),
                        p.get("statementsPerSecondPerInstance").asDouble(), p.get("serverCpuPercent").asDouble(),
                        p.get("serverCpuPercentPerInstance").asDouble(), p.get("validAtTheEnd").asLong()));
                perInstance.add(e, n, p.get("statementsPerSecondPerInstance").asDouble());
                cpu.add(e, n, p.get("serverCpuPercentPerInstance").asDouble());
            });
            flat("statements/s per instance with " + first(curve) + " and with " + last(curve) + " instances, " + e,
                    value(curve, first(curve), "statementsPerSecondPerInstance"),
                    value(curve, last(curve), "statementsPerSecondPerInstance"), "/s", 1.5);
        }
        chart("instances-statements.png", "Statements per second per instance", "instances", "statements/s",
                perInstance, false);
        chart("instances-cpu.png", "Server CPU per instance", "instances", "% of a core", cpu, false);
        md.append("\n![statements](instances-statements.png)\n![cpu](instances-cpu.png)\n");
    }

    private void table() throws IOException {
        JsonNode t = curves.get("table");
        md.append("\n### 8. The lock table after 10⁶ names were used\n\n");
        md.append("LEASE acquisitions (1,000, one thread) on a table of 1,000 rows; then with 10⁶ more rows of names used"
                + " once two days ago, on those names and on new ones; then after `purgeUnused(1 day)` removed them."
                + " Rows are counted by InnoDB's estimate. The embedded server runs with a 64 MiB buffer pool, so a"
                + " table of 10⁶ rows no longer fits in memory and a name drawn at random is often read from disk.\n\n");
        md.append("| table | rows | data + index MB | acquire p50 µs | p99 µs |\n|---|---:|---:|---:|---:|\n");
        Map<String, Map<String, Double>> bars = new LinkedHashMap<>();
        row(bars, "1,000 rows", t.get("smallTableSize"), t.get("smallTable"));
        row(bars, "10⁶ rows, names that exist", t.get("bigTableSize"), t.get("bigTableExistingNames"));
        row(bars, "10⁶ rows, new names", t.get("bigTableSize"), t.get("bigTableNewNames"));
        row(bars, "after the purge, names that come back", t.get("afterPurgeSize"), t.get("afterPurge"));
        md.append(String.format(Locale.ROOT, "%nBulk insert of the rows: %.1f s. `purgeUnused` removed %d rows in %.1f s"
                + " (%.0f rows/s). InnoDB keeps the space it freed for new rows (the file does not shrink without"
                + " `OPTIMIZE TABLE`).%n", t.get("bulkInsertSeconds").asDouble(), t.get("purged").asLong(),
                t.get("purgeSeconds").asDouble(), t.get("purged").asLong() / Math.max(1e-9, t.get("purgeSeconds")
                        .asDouble())));
        Charts.bars(results.resolve("table-latency.png"), "Acquisition latency by lock-table size", "table", "µs", bars);
        md.append("\n![table](table-latency.png)\n");
        flat("acquisition latency (p50) on 1,000 rows and with 10⁶ rows", t.get("smallTable").get("p50Micros")
                .asDouble(), t.get("bigTableExistingNames").get("p50Micros").asDouble(), "µs", 1.2);
    }

    private void row(Map<String, Map<String, Double>> bars, String label, JsonNode size, JsonNode latency) {
        double megabytes = (size.get("dataBytes").asLong() + size.get("indexBytes").asLong()) / 1e6;
        md.append(String.format(Locale.ROOT, "| %s | %d | %.1f | %.0f | %.0f |%n", label, size.get("rows").asLong(),
                megabytes, latency.get("p50Micros").asDouble(), latency.get("p99Micros").asDouble()));
        bars.computeIfAbsent("p50", k -> new LinkedHashMap<>()).put(label, latency.get("p50Micros").asDouble());
        bars.computeIfAbsent("p99", k -> new LinkedHashMap<>()).put(label, latency.get("p99Micros").asDouble());
    }

    /** A target: the value at the far end stays within {@code factor} of the value at the near end. */
    private void flat(String what, double near, double far, String unit, double factor) {
        double ratio = near > 0 ? far / near : 0;
        // the target is about growth: a point that got faster meets it
        targets.add(new String[] { what + " at most " + Math.round((factor - 1) * 100) + " % higher",
                String.format(Locale.ROOT, "%.1f%s → %.1f%s (%.2f ×)", near, unit, far, unit, ratio),
                ratio <= factor ? "yes" : "**no**" });
    }

    private void chart(String file, String title, String x, String y, Charts.Lines lines, boolean logY)
            throws IOException {
        Charts.lines(results.resolve(file), title, x, y, lines, logY);
    }

    /** A point of a curve: its label (the x value as written), that value, its measurements. */
    @FunctionalInterface
    private interface Point {
        void accept(String key, double n, JsonNode p) throws IOException;
    }

    private static void forEachPoint(JsonNode curve, Point each) throws IOException {
        for (Iterator<Map.Entry<String, JsonNode>> points = curve.fields(); points.hasNext();) {
            Map.Entry<String, JsonNode> entry = points.next();
            each.accept(entry.getKey(), Double.parseDouble(entry.getKey()), entry.getValue());
        }
    }

    /** A heap difference below 0 is the collector's noise (100 locks weigh less than what one GC cycle moves). */
    private static String heapPerLock(long bytes) {
        return bytes < 0 ? "below noise" : String.valueOf(bytes);
    }

    private static String first(JsonNode curve) {
        return curve.fieldNames().next();
    }

    private static String last(JsonNode curve) {
        String last = null;
        for (Iterator<String> names = curve.fieldNames(); names.hasNext();) {
            last = names.next();
        }
        return last;
    }

    private static double value(JsonNode curve, String point, String field) {
        return curve.get(point).get(field).asDouble();
    }
}
