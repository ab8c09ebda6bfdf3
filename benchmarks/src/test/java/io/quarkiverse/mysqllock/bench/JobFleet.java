package io.quarkiverse.mysqllock.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * Three instances of a scheduling benchmark's subject ({@link SchedulingRuns.Subject}), each connected as a database
 * user of its own ({@link #USERS}); an instance can be paused, killed and started again. Closed gracefully.
 */
final class JobFleet implements AutoCloseable {

    static final String[] USERS = { "s1", "s2", "s3" };

    private final TestDatabase db;
    private final Path work;
    private final Map<String, String> base;
    private final SchedulingRuns.Subject subject;
    private final boolean ticking;
    private final List<AppProcess> processes = new ArrayList<>();
    private final int[] incarnations = new int[USERS.length];

    JobFleet(TestDatabase db, Path work, Map<String, String> base, SchedulingRuns.Subject subject, boolean ticking) {
        this.db = db;
        this.work = work;
        this.base = base;
        this.subject = subject;
        this.ticking = ticking;
        // one after another: three quarkus-quartz instances started at once race to store the job, and one fails to
        // start ("Couldn't store job: Duplicate entry")
        for (int i = 0; i < USERS.length; i++) {
            AppProcess process = start(i);
            processes.add(process);
            awaitStarted(process);
        }
    }

    private AppProcess start(int i) {
        Map<String, String> properties = new LinkedHashMap<>(base);
        properties.putAll(subject.settings());
        properties.put("quarkus.datasource.username", USERS[i]);
        properties.put("quarkus.datasource.password", USERS[i]);
        properties.put("bench.instance.id", String.valueOf(i + 1));
        properties.put("bench.job.cron", ticking ? "*/1 * * * * ?" : "off");
        properties.put("quarkus.log.category.\"io.quarkus\".level", "INFO");
        return Benchmarks.start(subject.app(), work, subject.name().replace(' ', '-') + "-" + (i + 1) + "."
                + ++incarnations[i], properties);
    }

    private static void awaitStarted(AppProcess process) {
        process.awaitLine(line -> line.contains("Installed features"), Duration.ofSeconds(120));
    }

    AppProcess process(int i) {
        return processes.get(i);
    }

    /** Kills instance {@code i} (SIGKILL); {@link #restart} starts it again. */
    void kill(int i) {
        processes.get(i).kill();
    }

    /** Starts instance {@code i} again, and waits until it started. */
    void restart(int i) {
        AppProcess process = start(i);
        processes.set(i, process);
        awaitStarted(process);
    }

    /** Until the job ran five ticks from now: the fleet settled (Quartz's instances checked in, claims warmed up). */
    void awaitTicks() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        long since = SchedulingRuns.now();
        while (db.queryLong("SELECT COUNT(*) FROM job_history WHERE subject = ? AND tick > ?", subject.name(),
                since) < 5) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(subject.name() + ": no five ticks in 120 s");
            }
            Thread.sleep(200); // polling the history table
        }
    }

    /** The ticks of a subject that ran more than once, between two seconds (both excluded). */
    static long ticksRunTwice(TestDatabase db, String subject, long from, long to) {
        return db.queryLong("SELECT COUNT(*) FROM (SELECT tick FROM job_history WHERE subject = ? AND tick > ?"
                + " AND tick < ? GROUP BY tick HAVING COUNT(*) > 1) twice", subject, from, to);
    }

    /** The ticks of a subject that ran, between two seconds (both excluded). */
    static long ticksRun(TestDatabase db, String subject, long from, long to) {
        return db.queryLong("SELECT COUNT(DISTINCT tick) FROM job_history WHERE subject = ? AND tick > ? AND tick < ?",
                subject, from, to);
    }

    @Override
    public void close() {
        processes.forEach(process -> {
            if (process.isAlive()) {
                process.resume();
            }
            process.close();
        });
    }
}
