package io.quarkiverse.mysqllock.testing.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

import java.time.Instant;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkiverse.mysqllock.testing.JobTicks;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code JobTicks}: a user's test fires a job's ticks at the times it chooses and asserts on the history: a tick runs
 * once, a pause is obeyed, a gap is caught up before {@code fire} returns.
 */
class JobTicksTest {

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .withApplicationRoot(jar -> jar.addClasses(Report.class, Elsewhere.class))
            .overrideConfigKey("quarkus.datasource.db-kind", "mysql")
            .overrideConfigKey("quarkus.datasource.jdbc.url", TestDatabase.shared().jdbcUrl())
            .overrideConfigKey("quarkus.datasource.username", TestDatabase.shared().user())
            .overrideConfigKey("quarkus.datasource.password", TestDatabase.shared().password())
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"kit:report\".missed-ticks", "run-once")
            .overrideConfigKey("quarkus.mysql-lock.jobs.\"kit:elsewhere\".missed-ticks", "run-once");

    @Inject
    JobTicks ticks;

    @Inject
    LockManager locks;

    @Test
    void ticksFiredByHandRunOnceAreObeyAPauseAndCatchUpAGap() {
        Instant first = Instant.parse("2031-05-01T02:00:00Z");
        assertThat(ticks.fire("kit:report", first)).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(ticks.fire("kit:report", first)).as("claimed before: not run again").isNull();

        // every replica down for two nights: the third runs, and the catch-up has run when fire returns
        assertThat(ticks.fire("kit:report", first.plusSeconds(3 * 86_400))).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(locks.jobs().history("kit:report", 10)).extracting(JobRun::kind, JobRun::tick, JobRun::outcome)
                .containsExactlyInAnyOrder(tuple(RunKind.SCHEDULED, first, RunOutcome.SUCCEEDED),
                        tuple(RunKind.SCHEDULED, first.plusSeconds(3 * 86_400), RunOutcome.SUCCEEDED),
                        tuple(RunKind.CATCH_UP, first.plusSeconds(2 * 86_400), RunOutcome.SUCCEEDED));

        locks.jobs().pause("kit:report", "test", null);
        assertThat(ticks.fire("kit:report", first.plusSeconds(4 * 86_400))).isEqualTo(RunOutcome.SKIPPED_PAUSED);
        assertThat(Report.runs).isEqualTo(3);
    }

    /**
     * A tick fired as another instance is claimed and recorded as that instance's run: this instance does not run it,
     * and the catch-up that instance's claim found runs here.
     */
    @Test
    void aTickFiredAsAnotherInstanceRunsThereNotHere() {
        Instant first = Instant.parse("2032-05-01T02:00:00Z");
        assertThat(ticks.fireAs("replica-2", "kit:elsewhere", first)).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(ticks.fire("kit:elsewhere", first)).as("claimed by replica-2: not run here").isNull();
        assertThat(Elsewhere.runs).isZero();

        // replica-2 fires the third night after two were missed: the catch-up runs here, once it ended
        Instant third = first.plusSeconds(3 * 86_400);
        assertThat(ticks.fireAs("replica-2", "kit:elsewhere", third)).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(locks.jobs().history("kit:elsewhere", 10))
                .extracting(JobRun::kind, JobRun::tick, JobRun::outcome, run -> run.instance().equals("replica-2"))
                .containsExactlyInAnyOrder(tuple(RunKind.SCHEDULED, first, RunOutcome.SUCCEEDED, true),
                        tuple(RunKind.SCHEDULED, third, RunOutcome.SUCCEEDED, true),
                        tuple(RunKind.CATCH_UP, first.plusSeconds(2 * 86_400), RunOutcome.SUCCEEDED, false));
        assertThat(Elsewhere.runs).isEqualTo(1);
        assertThat(locks.jobs().job("kit:elsewhere")).hasValueSatisfying(
                job -> assertThat(job.lastSuccess()).as("the fleet's last success").isNotNull());

        assertThatThrownBy(() -> ticks.fireAs(" ", "kit:elsewhere", third)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("other instance");
    }

    @Test
    void aJobThatIsNoneIsRefused() {
        assertThatThrownBy(() -> ticks.fire("kit:none", Instant.now())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("kit:report");
    }

    @ApplicationScoped
    public static class Elsewhere {
        static volatile int runs;

        @Scheduled(cron = "0 0 2 * * ? 2032", timeZone = "UTC")
        @Locked(value = "kit:elsewhere", onBusy = OnBusy.SKIP)
        void run(ScheduledExecution execution) {
            runs++;
        }
    }

    @ApplicationScoped
    public static class Report {
        static volatile int runs;

        @Scheduled(cron = "0 0 2 * * ? 2031", timeZone = "UTC")
        @Locked(value = "kit:report", onBusy = OnBusy.SKIP)
        void run(ScheduledExecution execution) {
            runs++;
        }
    }
}
