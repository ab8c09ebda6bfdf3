package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * A cron job every three seconds with {@code missed-ticks=run-all}, in three instances: every instance is killed, the
 * ticks of the time the fleet is down pass, and three instances start again. Each missed tick then runs exactly once
 * across the new fleet, as a catch-up, and no tick runs twice.
 */
class CatchUpAcrossProcessesIT {

    private static final long PERIOD = 3;
    /** The job's settings, in each instance. */
    private static final Map<String, String> SETTINGS = Map.of("lock-demo.cron", "*/3 * * * * ?",
            "quarkus.mysql-lock.jobs.\"cron:report\".missed-ticks", "run-all",
            "quarkus.mysql-lock.jobs.\"cron:report\".max-catch-up-runs", "100",
            "quarkus.mysql-lock.jobs.\"cron:report\".catch-up-window", "1h");

    @Test
    void theTicksMissedWhileEveryInstanceWasDownRunOnceEach() {
        TestDatabase db = TestDatabase.shared();
        db.execute("DROP TABLE IF EXISTS cron_history");
        db.execute("CREATE TABLE cron_history (id BIGINT AUTO_INCREMENT PRIMARY KEY, tick BIGINT NOT NULL,"
                + " instance VARCHAR(100) NOT NULL, ran_at TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3))");
        JobRows.forget(db, "cron:report"); // another test's ticks of it are no gap of this one's

        List<AppProcess> first = start(db, "first");
        Await.until("two ticks to run", Duration.ofSeconds(60),
                () -> db.queryLong("SELECT COUNT(DISTINCT tick) FROM cron_history") >= 2);
        first.forEach(AppProcess::kill);
        // a tick claimed by an instance killed before its job wrote the row is run, not missed
        long lastBefore = Math.max(db.queryLong("SELECT MAX(tick) FROM cron_history"),
                db.queryLong("SELECT latest_tick DIV 1000 FROM mysql_lock_job WHERE name = 'cron:report'"));
        // the fleet is down while three ticks pass
        Await.until("three ticks to pass", Duration.ofSeconds(30),
                () -> Instant.now().getEpochSecond() >= lastBefore + 3 * PERIOD + 1);

        long restarted = Instant.now().getEpochSecond(); // no instance runs before this second
        List<AppProcess> second = start(db, "second");
        try {
            Await.until("the missed ticks to be caught up", Duration.ofSeconds(120), () -> {
                long latest = db.queryLong("SELECT MAX(tick) FROM cron_history");
                return latest >= restarted + 2 * PERIOD && db.queryLong("SELECT COUNT(DISTINCT tick) FROM cron_history"
                        + " WHERE tick > " + lastBefore + " AND tick <= " + latest) == (latest - lastBefore) / PERIOD;
            });
        } finally {
            second.forEach(AppProcess::close);
        }
        assertThat(db.queryLong("SELECT COUNT(*) FROM (SELECT tick FROM cron_history GROUP BY tick"
                + " HAVING COUNT(*) > 1) twice")).as("ticks that ran more than once").isZero();
        long[] missed = LongStream.iterate(lastBefore + PERIOD, tick -> tick < restarted, tick -> tick + PERIOD)
                .toArray();
        assertThat(missed).as("ticks of the time the fleet was down").hasSizeGreaterThanOrEqualTo(3);
        assertThat(db.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'cron:report' AND kind = 'CATCH_UP'"
                + " AND outcome = 'SUCCEEDED' AND tick > " + lastBefore * 1000 + " AND tick < " + restarted * 1000))
                .as("catch-ups of the ticks of the time the fleet was down").isEqualTo(missed.length);
    }

    private static List<AppProcess> start(TestDatabase db, String fleet) {
        List<AppProcess> processes = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            processes.add(Workers.start(db, "catch-up-" + fleet + "-" + i, SETTINGS, null));
        }
        for (AppProcess process : processes) {
            process.awaitLine(line -> line.contains("Installed features"), Duration.ofSeconds(60));
        }
        return processes;
    }
}
