package io.quarkiverse.mysqllock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The scheduling benchmark: a job every second on a fleet of three instances, on this extension (NAMED, LEASE) and on
 * quarkus-quartz in clustered mode, on the same embedded MariaDB. Each instance connects as a user of its own, so the
 * server's own counters ({@code userstat}: statements and CPU time per user) say what each sent and cost. Per subject,
 * three phases, each with a fresh fleet: idle (the job off: what the fleet costs with no job), ticking (the job on:
 * statements and server CPU per tick, net of idle), and ticking with the server's general log on (each statement
 * attributed to its tick and instance: what the instance that runs a tick sends, and what each of the others does).
 */
final class SchedulingRuns {

    /** What is measured: an application and its settings for the job. */
    record Subject(String name, Path app, Map<String, String> settings) {
    }

    private static final String[] USERS = JobFleet.USERS;

    private final TestDatabase db;
    private final Path work;
    private final Map<String, String> base;
    private final Duration idle;
    private final Duration ticking;
    private final Duration logged;

    SchedulingRuns(TestDatabase db, Path work, Map<String, String> base, Duration phase) {
        this.db = db;
        this.work = work;
        this.base = base;
        this.idle = phase;
        this.ticking = phase;
        this.logged = phase.dividedBy(2);
    }

    /** The users, the history table, Quartz's tables (its own DDL), and the server's per-user counters. */
    void prepare() throws IOException, SQLException {
        for (String user : USERS) {
            db.execute("CREATE USER IF NOT EXISTS '" + user + "'@'%' IDENTIFIED BY '" + user + "'");
            db.execute("GRANT ALL PRIVILEGES ON " + TestDatabase.SCHEMA + ".* TO '" + user + "'@'%'");
        }
        db.execute("DROP TABLE IF EXISTS job_history");
        db.execute("CREATE TABLE job_history (id BIGINT AUTO_INCREMENT PRIMARY KEY, subject VARCHAR(32) NOT NULL,"
                + " tick BIGINT NOT NULL, instance VARCHAR(8) NOT NULL, ran_at TIMESTAMP(3) NOT NULL"
                + " DEFAULT CURRENT_TIMESTAMP(3), KEY subject_tick (subject, tick))");
        try (InputStream ddl = SchedulingRuns.class.getClassLoader()
                .getResourceAsStream("org/quartz/impl/jdbcjobstore/tables_mysql_innodb.sql")) {
            String text = new String(ddl.readAllBytes(), StandardCharsets.UTF_8).replaceAll("(?m)^#.*$", "");
            for (String statement : text.split(";")) {
                if (!statement.isBlank()) {
                    db.execute(statement.strip());
                }
            }
        }
        db.execute("SET GLOBAL userstat = 1");
        db.execute("SET GLOBAL log_output = 'TABLE'");
        cpuMicrosPerUnit = cpuUnit();
    }

    /** Microseconds per unit of {@code USER_STATISTICS.CPU_TIME}, measured rather than taken from its documentation. */
    private double cpuMicrosPerUnit = 1;

    /** A CPU-bound statement of a user, timed: its wall time over the CPU time the server counted for it. */
    private double cpuUnit() throws SQLException {
        db.execute("FLUSH USER_STATISTICS");
        long start = System.nanoTime();
        try (Connection connection = java.sql.DriverManager.getConnection(db.jdbcUrl(), USERS[0], USERS[0]);
                Statement statement = connection.createStatement()) {
            statement.execute("SELECT BENCHMARK(3000000, SHA2('calibration', 256))");
        }
        double wallMicros = (System.nanoTime() - start) / 1000.0;
        try (Connection connection = db.connect();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT CPU_TIME FROM information_schema.USER_STATISTICS"
                        + " WHERE USER = '" + USERS[0] + "'")) {
            double units = rs.next() ? rs.getDouble(1) : 0;
            double perUnit = units > 0 ? wallMicros / units : 1;
            System.out.printf("scheduling: CPU_TIME unit measured as %.4f µs (%.0f µs of a CPU-bound statement)%n",
                    perUnit, wallMicros);
            return perUnit;
        }
    }

    /** The three phases of one subject. */
    Map<String, Object> measure(Subject subject) throws Exception {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("subject", subject.name());
        Usage quiet;
        try (JobFleet fleet = new JobFleet(db, work, base, subject, false)) {
            quiet = usage(idle);
        }
        Usage busy;
        long from;
        long to;
        try (JobFleet fleet = new JobFleet(db, work, base, subject, true)) {
            fleet.awaitTicks();
            from = now();
            busy = usage(ticking);
            to = now();
        }
        long ticks = to - from - 1;
        result.put("ticks", ticks);
        result.put("ticks run twice", JobFleet.ticksRunTwice(db, subject.name(), from, to));
        result.put("ticks not run", ticks - JobFleet.ticksRun(db, subject.name(), from, to));
        double seconds = ticking.toMillis() / 1000.0;
        double idleSeconds = idle.toMillis() / 1000.0;
        result.put("idle statements per second, fleet", round(quiet.statements() / idleSeconds));
        result.put("idle server CPU µs per second, fleet", round(quiet.cpuMicros() / idleSeconds));
        result.put("statements per tick, fleet", round(busy.statements() / seconds));
        result.put("statements per tick, fleet, net of idle",
                round(busy.statements() / seconds - quiet.statements() / idleSeconds));
        result.put("server CPU µs per tick, fleet", round(busy.cpuMicros() / seconds));
        result.put("server CPU µs per tick, fleet, net of idle",
                round(busy.cpuMicros() / seconds - quiet.cpuMicros() / idleSeconds));
        try (JobFleet fleet = new JobFleet(db, work, base, subject, true)) {
            fleet.awaitTicks();
            result.putAll(attributed(subject.name(), quiet.statements() / idleSeconds / USERS.length));
        }
        System.out.println("scheduling " + subject.name() + ": " + result);
        return result;
    }

    /** What the fleet's users sent and cost the server over a phase. */
    record Usage(double statements, double cpuMicros) {
    }

    private Usage usage(Duration phase) throws SQLException, InterruptedException {
        db.execute("FLUSH USER_STATISTICS");
        Thread.sleep(phase.toMillis()); // a measuring window: the fleet runs on its own meanwhile
        double statements = 0;
        double cpu = 0;
        try (Connection connection = db.connect();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT SELECT_COMMANDS + UPDATE_COMMANDS + OTHER_COMMANDS,"
                        + " CPU_TIME FROM information_schema.USER_STATISTICS WHERE USER IN ('s1', 's2', 's3')")) {
            while (rs.next()) {
                statements += rs.getLong(1);
                cpu += rs.getDouble(2) * cpuMicrosPerUnit;
            }
        }
        return new Usage(statements, cpu);
    }

    /**
     * With the general log on for half a phase: each statement of the fleet (but the job's own history row) given to
     * the tick of the second it was sent in, and to the instance that ran that tick or to the others.
     */
    private Map<String, Object> attributed(String subject, double idlePerInstance) throws Exception {
        db.execute("TRUNCATE mysql.general_log");
        db.execute("SET GLOBAL general_log = 1");
        long from = now();
        Thread.sleep(logged.toMillis()); // the window the log covers
        long to = now();
        db.execute("SET GLOBAL general_log = 0");
        Map<Long, String> runner = new HashMap<>();
        Map<String, Long> texts = new TreeMap<>();
        Map<Long, Map<String, Long>> sent = new HashMap<>();
        try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
            try (ResultSet rs = statement.executeQuery("SELECT tick, instance FROM job_history WHERE subject = '" + subject
                    + "' AND tick > " + from + " AND tick < " + to)) {
                while (rs.next()) {
                    runner.put(rs.getLong(1), "s" + rs.getString(2));
                }
            }
            try (ResultSet rs = statement.executeQuery("SELECT FLOOR(UNIX_TIMESTAMP(event_time)), user_host, argument"
                    + " FROM mysql.general_log WHERE command_type IN ('Query', 'Execute')")) {
                while (rs.next()) {
                    String user = rs.getString(2).replaceAll("\\[.*", "");
                    String text = rs.getString(3);
                    if (!List.of(USERS).contains(user) || text.contains("job_history")) {
                        continue;
                    }
                    long tick = rs.getLong(1);
                    if (tick > from && tick < to) {
                        sent.computeIfAbsent(tick, ignored -> new HashMap<>()).merge(user, 1L, Long::sum);
                        texts.merge((user.equals(runner.get(tick)) ? "runner: " : "other:  ") + shape(text), 1L,
                                Long::sum);
                    }
                }
            }
        }
        double ran = 0;
        double others = 0;
        long ticks = 0;
        for (Map.Entry<Long, String> tick : runner.entrySet()) {
            Map<String, Long> byUser = sent.getOrDefault(tick.getKey(), Map.of());
            ticks++;
            for (String user : USERS) {
                long count = byUser.getOrDefault(user, 0L);
                if (user.equals(tick.getValue())) {
                    ran += count;
                } else {
                    others += count;
                }
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        long perTicks = Math.max(1, ticks);
        double runs = ran / perTicks;
        double other = others / perTicks / (USERS.length - 1);
        result.put("statements per tick, the instance that runs it", round(runs));
        result.put("statements per tick, each other instance", round(other));
        result.put("idle statements per second, each instance", round(idlePerInstance));
        result.put("statements per tick, the instance that runs it, net of idle", round(runs - idlePerInstance));
        result.put("statements per tick, each other instance, net of idle", round(other - idlePerInstance));
        Map<String, Double> shapes = new LinkedHashMap<>();
        texts.entrySet().stream().sorted(Map.Entry.<String, Long> comparingByValue().reversed()).limit(12)
                .forEach(entry -> shapes.put(entry.getKey(), round(entry.getValue() / (double) perTicks)));
        result.put("statements per tick, by shape", shapes);
        return result;
    }

    /** A statement's text with its literals out, and cut: the same statement whatever its values. */
    private static String shape(String text) {
        String shape = text.replaceAll("'[^']*'", "?").replaceAll("\\b\\d+\\b", "?").replaceAll("\\s+", " ").strip();
        return shape.length() > 110 ? shape.substring(0, 110) + "…" : shape;
    }

    static long now() {
        return System.currentTimeMillis() / 1000;
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
