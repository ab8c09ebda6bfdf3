package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/** A job's settings under a name that is no job of the application would never apply: the start fails, naming it. */
class UnknownJobSettingsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class, Job.class)
                    .overrideConfigKey("quarkus.mysql-lock.jobs.\"cron:nigthly-report\".alert-after", "26h"),
            "quarkus.mysql-lock.jobs.\"cron:nigthly-report\"", "name no scheduled job of this application",
            "[cron:nightly-report]");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }

    @ApplicationScoped
    public static class Job {

        @Locked(value = "cron:nightly-report", onBusy = OnBusy.SKIP)
        public void report(ScheduledExecution execution) {
        }
    }
}
