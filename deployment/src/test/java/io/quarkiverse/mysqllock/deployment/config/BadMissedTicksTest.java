package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A job that cannot catch up as its settings ask fails the start, each setting named: a method that cannot run
 * outside its schedule, a schedule whose ticks are not known, a window under a second, no runs at all, or more than a
 * catch-up is for.
 */
class BadMissedTicksTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class, Job.class)
                    .overrideConfigKey("quarkus.mysql-lock.jobs.\"bad:arguments\".missed-ticks", "run-once")
                    .overrideConfigKey("bad.cron", "off")
                    .overrideConfigKey("quarkus.mysql-lock.jobs.\"bad:off\".missed-ticks", "run-all")
                    .overrideConfigKey("quarkus.mysql-lock.jobs.\"bad:window\".catch-up-window", "500ms")
                    .overrideConfigKey("quarkus.mysql-lock.jobs.\"bad:runs\".max-catch-up-runs", "0")
                    .overrideConfigKey("quarkus.mysql-lock.jobs.\"bad:backlog\".max-catch-up-runs", "1001"),
            "quarkus.mysql-lock.jobs.\"bad:arguments\".missed-ticks=RUN_ONCE",
            "takes its ScheduledExecution and nothing else",
            "quarkus.mysql-lock.jobs.\"bad:off\".missed-ticks=RUN_ALL", "its ticks are not known",
            "quarkus.mysql-lock.jobs.\"bad:window\".catch-up-window is PT0.5S: at least a second",
            "quarkus.mysql-lock.jobs.\"bad:runs\".max-catch-up-runs is 0: from 1 to 1000",
            "quarkus.mysql-lock.jobs.\"bad:backlog\".max-catch-up-runs is 1001: from 1 to 1000");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }

    @ApplicationScoped
    public static class Job {

        @Locked(value = "bad:arguments", onBusy = OnBusy.SKIP)
        public void arguments(ScheduledExecution execution, String extra) {
        }

        @Locked(value = "bad:off", onBusy = OnBusy.SKIP)
        @Scheduled(cron = "{bad.cron}")
        public void off(ScheduledExecution execution) {
        }

        @Locked(value = "bad:window", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void window(ScheduledExecution execution) {
        }

        @Locked(value = "bad:backlog", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void backlog(ScheduledExecution execution) {
        }

        @Locked(value = "bad:runs", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void runs(ScheduledExecution execution) {
        }
    }
}
