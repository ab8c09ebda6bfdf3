package io.quarkiverse.mysqllock.bench;

import java.util.List;
import java.util.Map;

/** The scheduling benchmark's table: one column per subject, the ratios against quarkus-quartz measured in the run. */
final class SchedulingReport {

    /** The figures of the table, in its order; those marked with a ratio get a row "× quarkus-quartz" below them. */
    private static final List<String> ROWS = List.of("ticks", "ticks run twice", "ticks not run",
            "statements per tick, fleet, net of idle", "statements per tick, the instance that runs it",
            "statements per tick, each other instance", "statements per tick, the instance that runs it, net of idle",
            "statements per tick, each other instance, net of idle", "server CPU µs per tick, fleet, net of idle",
            "idle statements per second, fleet", "idle server CPU µs per second, fleet");
    private static final List<String> RATIOS = List.of("statements per tick, fleet, net of idle",
            "server CPU µs per tick, fleet, net of idle", "idle statements per second, fleet",
            "idle server CPU µs per second, fleet");

    private SchedulingReport() {
    }

    static String markdown(List<Map<String, Object>> subjects) {
        Map<String, Object> quartz = subjects.stream().filter(s -> "quarkus-quartz".equals(s.get("subject")))
                .findFirst().orElse(null);
        StringBuilder md = new StringBuilder("### Scheduling: a job every second on three instances\n\n");
        md.append("Each instance connects as a database user of its own; the server's per-user counters (`userstat`) give"
                + " the statements and the CPU time, net of the same fleet idle (job off); the general log gives each"
                + " statement's tick and instance. The job's own write (its history row) is not counted.\n\n| |");
        subjects.forEach(s -> md.append(' ').append(s.get("subject")).append(" |"));
        md.append("\n|---|").append("---:|".repeat(subjects.size())).append('\n');
        for (String row : ROWS) {
            md.append("| ").append(row).append(" |");
            subjects.forEach(s -> md.append(' ').append(s.get(row)).append(" |"));
            md.append('\n');
            if (RATIOS.contains(row) && quartz != null) {
                md.append("| × quarkus-quartz |");
                double base = ((Number) quartz.get(row)).doubleValue();
                subjects.forEach(s -> md.append(' ').append(base == 0 ? "-"
                        : String.format(java.util.Locale.ROOT, "%.2f", ((Number) s.get(row)).doubleValue() / base))
                        .append(" |"));
                md.append('\n');
            }
        }
        md.append("\n#### Under faults\n\nThe same schedule for each, ten seconds apart, the job ticking every second"
                + " (`SchedulingFaults`).\n\n| |");
        subjects.forEach(s -> md.append(' ').append(s.get("subject")).append(" |"));
        md.append("\n|---|").append("---:|".repeat(subjects.size())).append('\n');
        for (String row : List.of("ticks", "ticks run twice", "ticks not run, every instance down apart")) {
            md.append("| ").append(row).append(" |");
            subjects.forEach(s -> md.append(' ').append(((Map<?, ?>) s.get("under faults")).get(row)).append(" |"));
            md.append('\n');
        }
        List<?> kinds = (List<?>) ((Map<?, ?>) subjects.get(0).get("under faults")).get("faults");
        for (int i = 0; i < kinds.size(); i++) {
            int fault = i;
            for (String row : List.of("ticks not run while it lasted", "next tick ran, ms after its end")) {
                md.append("| ").append(((Map<?, ?>) kinds.get(i)).get("fault")).append(": ").append(row).append(" |");
                subjects.forEach(s -> md.append(' ').append(((Map<?, ?>) ((List<?>) ((Map<?, ?>) s.get("under faults"))
                        .get("faults")).get(fault)).get(row)).append(" |"));
                md.append('\n');
            }
        }
        md.append("\n#### What each sends per tick (the general log; `?` stands for values)\n");
        for (Map<String, Object> subject : subjects) {
            md.append("\n").append(subject.get("subject")).append(":\n\n| statement | per tick |\n|---|---:|\n");
            ((Map<?, ?>) subject.get("statements per tick, by shape")).forEach((shape, perTick) -> md.append("| `")
                    .append(shape.toString().replace("|", "\\|")).append("` | ").append(perTick).append(" |\n"));
        }
        return md.toString();
    }
}
