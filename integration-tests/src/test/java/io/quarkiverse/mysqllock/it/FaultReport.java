package io.quarkiverse.mysqllock.it;

import java.io.IOException;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.quarkiverse.mysqllock.it.FaultSuite.Options;
import io.quarkiverse.mysqllock.it.FaultSuite.Result;

/** Writes a fault run's figures as {@code report.md} (one column per engine) and {@code report.json}. */
final class FaultReport {

    private FaultReport() {
    }

    static void write(Options options, List<Result> results) throws IOException {
        Set<String> rows = new LinkedHashSet<>();
        results.forEach(r -> rows.addAll(r.figures().keySet()));
        StringBuilder md = new StringBuilder("# Fault suite report\n\n");
        md.append("Seed ").append(options.seed()).append(", lease ttl ").append(options.ttl().toMillis())
                .append(" ms, keepalive ").append(options.keepalive().toMillis()).append(" ms, ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores, Java ")
                .append(System.getProperty("java.version")).append(".\n\n| |");
        results.forEach(r -> md.append(' ').append(r.scenario().label).append(" |"));
        md.append("\n|---|");
        results.forEach(r -> md.append("---|"));
        md.append('\n');
        for (String row : rows) {
            md.append("| ").append(row).append(" |");
            for (Result r : results) {
                md.append(' ').append(cell(r.figures().get(row))).append(" |");
            }
            md.append('\n');
        }
        md.append("| violations |");
        results.forEach(r -> md.append(' ').append(r.violations().size()).append(" |"));
        md.append("\n\n");
        for (Result r : results) {
            if (!r.scenario().guaranteed() && !r.violations().isEmpty()) {
                md.append("\n").append(r.scenario().label).append(": ").append(r.scenario().unguaranteed())
                        .append(":\n\n");
            }
            r.violations().forEach(v -> md.append("- ").append(r.scenario().label).append(": ").append(v).append('\n'));
        }
        Files.writeString(options.out().resolve("report.md"), md);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("seed", options.seed());
        json.put("ttlMs", options.ttl().toMillis());
        json.put("keepaliveMs", options.keepalive().toMillis());
        for (Result r : results) {
            Map<String, Object> engine = new LinkedHashMap<>(r.figures());
            engine.put("violations", r.violations());
            engine.put("guaranteed", r.scenario().guaranteed());
            json.put(r.scenario().name(), engine);
        }
        FaultSuite.json().writeValue(options.out().resolve("report.json").toFile(), json);
        options.log().println();
        options.log().println(md);
        options.log().println("Report: " + options.out().resolve("report.md").toAbsolutePath());
    }

    private static String cell(Object value) {
        if (value instanceof Map<?, ?> map) {
            return map.isEmpty() ? "-"
                    : map.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                            .collect(Collectors.joining("<br>"));
        }
        return value == null ? "-" : String.valueOf(value);
    }
}
