package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * {@code overlap=queue-one} across three processes: a cron job every two seconds whose runs last five, so ticks fire,
 * on every instance, while a run lasts. Each such tick is recorded {@code QUEUED} by the one instance that claimed it,
 * one {@code QUEUED} run follows each run that had ticks queued behind it, on any instance, and no two runs overlap or
 * run the same tick.
 */
class QueueOneAcrossProcessesIT {

    private static final Map<String, String> SETTINGS = Map.of("lock-demo.backlog.cron", "*/2 * * * * ?",
            "lock-demo.backlog.run-millis", "5000", "quarkus.mysql-lock.jobs.\"cron:backlog\".overlap", "queue-one");

    @Test
    void ticksThatFireWhileARunLastsRunOnceAfterItWithoutOverlap() {
        TestDatabase db = TestDatabase.shared();
        BacklogHistory.create(db);
        List<AppProcess> fleet = new ArrayList<>();
        long lastBeforeStop;
        try {
            for (int i = 1; i <= 3; i++) {
                fleet.add(Workers.start(db, "backlog-" + i, SETTINGS, null));
            }
            Await.until("four queued runs to end", Duration.ofSeconds(120),
                    () -> db.queryLong("SELECT COUNT(*) FROM backlog_history WHERE kind = 'QUEUED'") >= 4);
        } finally {
            // the history rows written before the fleet stops (a tick the stop cuts short may not get its lock)
            lastBeforeStop = db.queryLong("SELECT COALESCE(MAX(id), 0) FROM mysql_lock_run");
            fleet.forEach(AppProcess::close);
        }
        assertThat(BacklogHistory.overlapping(db)).as("runs that overlapped: %s", BacklogHistory.rows(db)).isZero();
        assertThat(db.queryLong("SELECT COUNT(*) FROM (SELECT tick FROM backlog_history GROUP BY tick"
                + " HAVING COUNT(*) > 1) twice")).as("ticks that ran twice").isZero();
        assertThat(db.queryLong("SELECT COUNT(DISTINCT instance) FROM mysql_lock_run WHERE name = 'cron:backlog'"
                + " AND outcome = 'QUEUED'")).as("instances that queued a tick").isGreaterThanOrEqualTo(1);
        // every queued run ran for a tick that was queued, and a run ended before it started
        assertThat(db.queryLong("SELECT COUNT(*) FROM backlog_history q WHERE q.kind = 'QUEUED' AND NOT EXISTS"
                + " (SELECT 1 FROM mysql_lock_run r WHERE r.name = 'cron:backlog' AND r.outcome = 'QUEUED'"
                + " AND r.tick = q.tick * 1000)")).as("queued runs for a tick nobody queued").isZero();
        assertThat(db.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'cron:backlog'"
                + " AND outcome IN ('SKIPPED_BUSY', 'NOT_ACQUIRED') AND id <= " + lastBeforeStop))
                .as("busy ticks skipped, not queued").isZero();
    }
}
