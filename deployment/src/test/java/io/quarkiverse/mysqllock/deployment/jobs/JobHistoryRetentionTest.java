package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.runtime.table.JobTable;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.RunTable;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code quarkus.mysql-lock.job-history.*}: the instance that ends a run of a job removes the job's rows beyond the
 * latest {@code keep-runs} and those older than {@code keep-for}, in batches, and no other job's.
 */
class JobHistoryRetentionTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class)
            .overrideConfigKey("quarkus.mysql-lock.job-history.keep-runs", "25")
            .overrideConfigKey("quarkus.mysql-lock.job-history.keep-for", "2d");

    @Inject
    Job job;

    @Inject
    LockManager locks;

    /**
     * 1,200 runs (more than one batch removes: each 500 rows) and, newer, 100 skipped ticks (a paused job): the latest 25
     * of each stay, apart, so that the skips push no run out; a run not ended stays, whatever its rank.
     */
    @Test
    void rowsBeyondTheLatestKeepRunsGoInBatchesRunsAndSkipsApart() {
        insertRuns("retention:counted", 1_200, "SUCCEEDED", "UTC_TIMESTAMP(6) - INTERVAL 2 HOUR");
        insertRuns("retention:counted", 1, "RUNNING", "UTC_TIMESTAMP(6) - INTERVAL 3 HOUR");
        insertRuns("retention:counted", 100, "SKIPPED_PAUSED", "UTC_TIMESTAMP(6) - INTERVAL 1 HOUR");
        insertRuns("retention:other", 40, "SUCCEEDED", "UTC_TIMESTAMP(6) - INTERVAL 1 HOUR");
        job.counted(Ticks.at(2_000));
        LockApp.await("the history trimmed", Duration.ofSeconds(30), () -> count("retention:counted") == 51);
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'retention:counted'"
                + " AND outcome = 'SKIPPED_PAUSED'")).as("the latest skips").isEqualTo(25);
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'retention:counted'"
                + " AND outcome = 'SUCCEEDED'")).as("the latest runs, the one that just ended among them").isEqualTo(25);
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'retention:counted'"
                + " AND tick = 2000 AND outcome = 'SUCCEEDED'")).isEqualTo(1);
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'retention:counted'"
                + " AND outcome = 'RUNNING'")).as("a run not ended stays").isEqualTo(1);
        assertThat(count("retention:other")).as("another job's rows stay").isEqualTo(40);
        assertThat(locks.jobs().history("retention:counted", 100)).hasSize(51);
    }

    /** Rows older than keep-for go, however few the job has; a run not ended, a day later. */
    @Test
    void rowsOlderThanKeepForGo() {
        insertRuns("retention:aged", 5, "SUCCEEDED", "UTC_TIMESTAMP(6) - INTERVAL 3 DAY");
        insertRuns("retention:aged", 2, "RUNNING", "UTC_TIMESTAMP(6) - INTERVAL 50 HOUR");
        insertRuns("retention:aged", 1, "RUNNING", "UTC_TIMESTAMP(6) - INTERVAL 4 DAY");
        insertRuns("retention:aged", 3, "SUCCEEDED", "UTC_TIMESTAMP(6) - INTERVAL 1 DAY");
        job.aged(Ticks.at(2_000));
        LockApp.await("the history trimmed", Duration.ofSeconds(30), () -> count("retention:aged") == 6);
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'retention:aged'"
                + " AND outcome = 'RUNNING'")).as("not ended, within a day more than keep-for").isEqualTo(2);
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = 'retention:aged'"
                + " AND started_at < UTC_TIMESTAMP(6) - INTERVAL 2 DAY AND ended_at IS NOT NULL")).isZero();
    }

    /** Rows of a job's history, as if other instances had run it (the first end of a run of it here then trims). */
    private static void insertRuns(String job, int rows, String outcome, String startedAt) {
        LockTable locks = new LockTable("mysql_lock", true);
        ServerState.update(new RunTable(locks, new JobTable(locks)).ddl());
        // a sequence of rows, each started a microsecond apart
        ServerState.update("INSERT INTO mysql_lock_run (name, tick, kind, outcome, instance, started_at, ended_at)"
                + " SELECT ?, seq, 'SCHEDULED', ?, 'elsewhere', " + startedAt + " - INTERVAL seq MICROSECOND, IF(? = 'RUNNING',"
                + " NULL, " + startedAt + ") FROM seq_1_to_" + rows, job, outcome, outcome);
    }

    private static long count(String job) {
        return ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock_run WHERE name = ?", job);
    }

    @ApplicationScoped
    public static class Job {

        @Locked(value = "retention:counted", onBusy = OnBusy.SKIP)
        public void counted(ScheduledExecution execution) {
        }

        @Locked(value = "retention:aged", onBusy = OnBusy.SKIP)
        public void aged(ScheduledExecution execution) {
        }
    }
}
