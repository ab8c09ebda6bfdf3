package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import io.quarkiverse.mysqllock.it.FaultHistory.Section;
import io.quarkiverse.mysqllock.it.FaultSuite.Fault;
import io.quarkiverse.mysqllock.it.FaultSuite.Kind;
import io.quarkiverse.mysqllock.it.JobControls.Request;

/**
 * The scheduling scenario's rules, over the runs the workers journaled ({@link FaultJobs}: a section per run, with its
 * tick and kind), the job's history in the run table, the faults and the fleet controls asked between them:
 * <ol>
 * <li>no tick runs twice, whether scheduled, caught up or queued;</li>
 * <li>every tick of the run (a second each) ran, or is in the history (skipped busy or paused, not acquired, cut short):
 * a tick neither run nor recorded is lost, unless a fault hit the fleet as it was claimed (its claimer killed, or the
 * database lost under it); the ticks of the time every instance was down are caught up, each once;</li>
 * <li>no tick fires into a run after a pause was answered and before its resume was asked; no catch-up starts then;
 * a tick is skipped as paused only while the job was;</li>
 * <li>every run-now accepted ran (or was skipped, busy) once, on the instance asked, unless that instance died; none
 * ran that was not accepted.</li>
 * </ol>
 */
final class JobChecker {

    /** A row of the job's history; its instance is the holder's identity, {@code <host>/<pid>/<instance-id>}. */
    record Row(long tick, String kind, String outcome, String instance) {
    }

    /** A tick is checked this long after the run began, and until this long before it ended (µs). */
    private static final long MARGIN = 5_000_000;
    /** Around a claim, a fault that can take the claim with it (µs): before it, and after it. */
    private static final long BEFORE_CLAIM = 1_000_000;
    private static final long AFTER_CLAIM = 2_000_000;

    final Map<String, Object> figures = new LinkedHashMap<>();
    final List<String> violations = new ArrayList<>();

    private final List<Section> runs;
    private final List<Row> rows;
    private final List<Fault> faults;
    private final Map<String, Long> deaths;
    private final List<Request> requests;
    private final long from;
    private final long to;

    /**
     * @param from when the faults began (wall-clock µs)
     * @param to when they ended, or the job was disabled
     */
    JobChecker(Collection<Section> sections, List<Row> rows, List<Fault> faults, Map<String, Long> deaths,
            List<Request> requests, long from, long to) {
        this.runs = sections.stream().filter(s -> s.kind != null && s.acquiredAt > 0).toList();
        this.rows = rows;
        this.faults = faults;
        this.deaths = deaths;
        this.requests = requests;
        this.from = from;
        this.to = to;
    }

    /** The job's history, every row. */
    static List<Row> rows(Connection connection) throws SQLException {
        List<Row> rows = new ArrayList<>();
        try (Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT tick, kind, outcome, instance FROM mysql_lock_run"
                        + " WHERE name = '" + FaultJobs.JOB + "' ORDER BY id")) {
            while (rs.next()) {
                rows.add(new Row(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4)));
            }
        }
        return rows;
    }

    JobChecker check() {
        twice();
        everyTick();
        pauses();
        runsNow();
        return this;
    }

    // rule 1
    private void twice() {
        Map<Long, List<Section>> byTick = runs.stream().filter(s -> !s.kind.equals("run_now"))
                .collect(Collectors.groupingBy(s -> s.tick, TreeMap::new, Collectors.toList()));
        long twice = 0;
        for (Map.Entry<Long, List<Section>> tick : byTick.entrySet()) {
            if (tick.getValue().size() > 1) {
                twice++;
                violations.add("Tick " + tick.getKey() + " ran " + tick.getValue().size() + " times: "
                        + tick.getValue().stream().map(s -> s.id + " (" + s.kind + ")").toList());
            }
        }
        Map<String, Long> byKind = new TreeMap<>(runs.stream().collect(Collectors.groupingBy(s -> s.kind,
                Collectors.counting())));
        figures.put("job runs, by kind", byKind);
        figures.put("ticks run twice", twice);
    }

    // rule 2
    private void everyTick() {
        long first = runs.stream().filter(s -> s.kind.equals("scheduled")).mapToLong(s -> s.tick).min()
                .orElse(Long.MAX_VALUE);
        long start = Math.max(first, (from + MARGIN) / 1000);
        long end = (to - MARGIN) / 1000;
        java.util.Set<Long> ran = runs.stream().filter(s -> !s.kind.equals("run_now")).map(s -> s.tick)
                .collect(Collectors.toSet());
        Map<Long, Row> recorded = new java.util.HashMap<>();
        rows.stream().filter(r -> !r.kind().equals("RUN_NOW")).forEach(r -> recorded.putIfAbsent(r.tick(), r));
        Map<String, Long> outcomes = new TreeMap<>();
        long checked = 0;
        Map<String, Long> cut = new TreeMap<>();
        for (long tick = (start / 1000 + 1) * 1000; tick <= end; tick += 1000) {
            checked++;
            if (ran.contains(tick)) {
                continue;
            }
            Row row = recorded.get(tick);
            if (row != null) {
                outcomes.merge(row.outcome(), 1L, Long::sum);
                continue;
            }
            Fault fault = faultAtClaim(tick * 1000);
            if (fault != null) {
                cut.merge(fault.kind().label, 1L, Long::sum);
                continue;
            }
            violations.add("Tick " + tick + " was lost: no instance ran it, none recorded it, and no fault hit the fleet"
                    + " as it was claimed");
        }
        figures.put("ticks checked", checked);
        figures.put("ticks not run, recorded, by outcome", outcomes);
        figures.put("ticks neither run nor recorded, by the fault at their claim", cut);
    }

    /** A fault that may have taken a tick's claim with it: its claimer killed, or its database lost, as it claimed. */
    private Fault faultAtClaim(long tickMicros) {
        for (Fault fault : faults) {
            // every instance down: the ticks of that time are caught up; only the ones claimed as they died are excused
            long until = (fault.kind() == Kind.FLEET_DOWN ? fault.injectedAt() : fault.healedAt()) + AFTER_CLAIM;
            if (tickMicros >= fault.injectedAt() - BEFORE_CLAIM && tickMicros <= until) {
                return fault;
            }
        }
        for (long death : deaths.values()) {
            if (death >= tickMicros - BEFORE_CLAIM && death <= tickMicros + AFTER_CLAIM) {
                return new Fault(Kind.SIGKILL, null, null, death, death, "a death");
            }
        }
        return null;
    }

    // rule 3
    private void pauses() {
        List<long[]> paused = new ArrayList<>();
        Request pause = null;
        for (Request request : requests) {
            if (request.action().equals("pause") && request.done()) {
                pause = request;
            } else if (request.action().equals("resume") && request.done() && pause != null) {
                paused.add(new long[] { pause.sentAt(), pause.answeredAt(), request.sentAt(), request.answeredAt() });
                long effect = pause.answeredAt();
                long resumed = request.sentAt();
                for (Section s : runs) {
                    boolean fired = (s.kind.equals("scheduled") || s.kind.equals("queued")) && s.tick * 1000 > effect
                            && s.tick * 1000 < resumed;
                    boolean caughtUp = s.kind.equals("catch_up") && s.acquiredAt > effect + 100_000
                            && s.acquiredAt < resumed;
                    if (fired || caughtUp) {
                        violations.add("Run " + s.id + " (" + s.kind + ", tick " + s.tick + ") after the pause answered at "
                                + effect + " µs, before the resume asked at " + resumed);
                    }
                }
                pause = null;
            }
        }
        for (Row row : rows) {
            if (row.outcome().equals("SKIPPED_PAUSED") && paused.stream()
                    .noneMatch(p -> row.tick() * 1000 >= p[0] - BEFORE_CLAIM && row.tick() * 1000 <= p[3])) {
                violations.add("Tick " + row.tick() + " skipped as paused by " + row.instance() + " while not paused");
            }
        }
        figures.put("pauses", paused.size());
    }

    // rule 4
    private void runsNow() {
        long accepted = 0;
        Map<String, Long> outcomes = new TreeMap<>();
        for (Request request : requests) {
            if (!request.action().equals("run-now")) {
                continue;
            }
            // the instance reads its clock (the run-now's tick) after the request was sent and before it answered: the
            // same host's clock as the controller's
            long low = request.sentAt() / 1000 - 1;
            long high = request.answeredAt() / 1000 + 1;
            List<Row> recorded = rows.stream().filter(r -> r.kind().equals("RUN_NOW")
                    && r.instance().endsWith("/" + request.worker()) && r.tick() >= low && r.tick() <= high).toList();
            long ran = runs.stream().filter(s -> s.kind.equals("run_now") && s.worker.equals(request.worker())
                    && s.tick >= low && s.tick <= high).count();
            Long death = deaths.get(request.worker());
            boolean died = death != null && death > request.sentAt();
            recorded.forEach(r -> outcomes.merge(r.outcome(), 1L, Long::sum));
            if (!request.done()) {
                if (!recorded.isEmpty() || ran > 0) {
                    violations.add("A run-now refused (" + request.status() + ") ran: " + request);
                }
                continue;
            }
            accepted++;
            if (recorded.size() > 1 || ran > 1) {
                violations.add("A run-now ran twice: " + request + ", history " + recorded + ", runs " + ran);
            } else if (recorded.isEmpty() && !died) {
                violations.add("A run-now accepted never ran nor was recorded: " + request);
            } else if (!recorded.isEmpty() && recorded.get(0).outcome().equals("SUCCEEDED") && ran != 1) {
                violations.add("A run-now recorded as run, not seen running: " + request);
            }
        }
        figures.put("run-nows accepted", accepted);
        figures.put("run-nows, by outcome", outcomes);
    }
}
