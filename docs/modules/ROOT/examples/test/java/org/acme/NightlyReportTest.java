package org.acme;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkiverse.mysqllock.testing.JobTicks;
import io.quarkus.test.junit.QuarkusTest;

// tag::test[]
@QuarkusTest
@EmbeddedMariaDb
class NightlyReportTest {

    @Inject
    JobTicks ticks; // <1>

    @Inject
    LockManager locks;

    @Test
    void theNightsEveryReplicaMissedAreCaughtUpOnce() {
        Instant night = Instant.parse("2099-03-01T02:00:00Z");
        assertThat(ticks.fire("cron:nightly-report", night)).isEqualTo(RunOutcome.SUCCEEDED); // <2>
        assertThat(ticks.fire("cron:nightly-report", night)).isNull(); // <3>

        Instant fourthNight = night.plusSeconds(3 * 86_400); // <4>
        assertThat(ticks.fire("cron:nightly-report", fourthNight)).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(locks.jobs().history("cron:nightly-report", 1)).singleElement() // <5>
                .extracting(JobRun::kind, JobRun::tick)
                .containsExactly(RunKind.CATCH_UP, night.plusSeconds(2 * 86_400));

        locks.jobs().pause("cron:nightly-report", "test", "checking the pause");
        Instant fifthNight = fourthNight.plusSeconds(86_400);
        assertThat(ticks.fire("cron:nightly-report", fifthNight)).isEqualTo(RunOutcome.SKIPPED_PAUSED); // <6>
        locks.jobs().resume("cron:nightly-report", "test", null);
        assertThat(ticks.fire("cron:nightly-report", fifthNight.plusSeconds(86_400)))
                .isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(locks.jobs().history("cron:nightly-report", 1)).singleElement() // <7>
                .extracting(JobRun::kind, JobRun::tick)
                .containsExactly(RunKind.CATCH_UP, fifthNight);
    }
}
// end::test[]
