package io.quarkiverse.mysqllock.deployment.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.runtime.health.MySqlLockJobsHealthCheck;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.health.api.Wellness;

/**
 * {@code quarkus.mysql-lock.jobs."job-name".alert-after}: the wellness check goes DOWN for an active job that has not
 * succeeded anywhere in the fleet for that long, judged from the jobs table on the server's clock; a paused job is not
 * watched; a job no instance ever claimed is judged from this instance's start. One read: the check keeps a read ten
 * seconds.
 */
class JobSilenceAlertTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class)
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"alert:fine\".alert-after", "1h")
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"alert:silent\".alert-after", "1h")
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"alert:failing\".alert-after", "1h")
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"alert:paused\".alert-after", "1m")
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"alert:unclaimed\".alert-after", "1ms")
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"alert:not-watched\".alert-after", "1h")
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"alert:resumed\".alert-after", "1h")
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"alert:still-active\".alert-after", "1h");

    @Inject
    Job job;

    @Inject
    LockManager locks;

    @Inject
    @Wellness
    MySqlLockJobsHealthCheck check;

    @Test
    void aJobSilentLongerThanItsAlertAfterIsDownAndTheOthersSaySo() {
        job.fine(Ticks.at(1_000));
        job.silent(Ticks.at(1_000));
        // its last success two hours ago, as the server's clock counts
        ServerState.update("UPDATE mysql_lock_job SET last_success_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR"
                + " WHERE name = 'alert:silent'");
        try {
            job.failing(Ticks.at(1_000));
        } catch (IllegalStateException expected) {
            // it never succeeded: counted from its first claimed tick
        }
        ServerState.update("UPDATE mysql_lock_job SET created_at = UTC_TIMESTAMP(6) - INTERVAL 3 HOUR"
                + " WHERE name = 'alert:failing'");
        job.paused(Ticks.at(1_000));
        ServerState.update("UPDATE mysql_lock_job SET last_success_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR"
                + " WHERE name = 'alert:paused'");
        locks.jobs().pause("alert:paused", "ops", null);

        // resumed after a pause: watched afresh from the resume; a resume of an active job changes nothing
        job.resumed(Ticks.at(1_000));
        ServerState.update("UPDATE mysql_lock_job SET last_success_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR"
                + " WHERE name = 'alert:resumed'");
        locks.jobs().pause("alert:resumed", "ops", null);
        locks.jobs().resume("alert:resumed", "ops", null);
        job.stillActive(Ticks.at(1_000));
        ServerState.update("UPDATE mysql_lock_job SET last_success_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR"
                + " WHERE name = 'alert:still-active'");
        locks.jobs().resume("alert:still-active", "ops", "it is not paused");

        HealthCheckResponse response = check.call();

        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
        Map<String, Object> data = response.getData().orElseThrow();
        assertThat(data).containsEntry("jobs watched", 8L);
        assertThat((String) data.get("alert:resumed")).startsWith("no success in the last");
        assertThat((String) data.get("alert:still-active")).startsWith("SILENT: no success in the last 2h");
        assertThat((String) data.get("alert:fine")).startsWith("no success in the last").contains("alert after 1h");
        assertThat((String) data.get("alert:silent")).startsWith("SILENT: no success in the last 2h");
        assertThat((String) data.get("alert:failing")).startsWith("SILENT: no success in the last 3h")
                .contains("and never one");
        assertThat((String) data.get("alert:paused")).isEqualTo("PAUSED: not watched while so");
        assertThat((String) data.get("alert:unclaimed")).startsWith("SILENT: no instance has claimed a tick of it");
        assertThat((String) data.get("alert:not-watched")).startsWith("no instance has claimed a tick of it")
                .as("an hour has not passed since this instance started");
    }

    @ApplicationScoped
    public static class Job {

        @Locked(value = "alert:fine", onBusy = OnBusy.SKIP)
        public void fine(ScheduledExecution execution) {
        }

        @Locked(value = "alert:silent", onBusy = OnBusy.SKIP)
        public void silent(ScheduledExecution execution) {
        }

        @Locked(value = "alert:failing", onBusy = OnBusy.SKIP)
        public void failing(ScheduledExecution execution) {
            throw new IllegalStateException("it always fails");
        }

        @Locked(value = "alert:paused", onBusy = OnBusy.SKIP)
        public void paused(ScheduledExecution execution) {
        }

        @Locked(value = "alert:unclaimed", onBusy = OnBusy.SKIP)
        public void unclaimed(ScheduledExecution execution) {
        }

        @Locked(value = "alert:resumed", onBusy = OnBusy.SKIP)
        public void resumed(ScheduledExecution execution) {
        }

        @Locked(value = "alert:still-active", onBusy = OnBusy.SKIP)
        public void stillActive(ScheduledExecution execution) {
        }

        @Locked(value = "alert:not-watched", onBusy = OnBusy.SKIP)
        public void notWatched(ScheduledExecution execution) {
        }
    }
}
