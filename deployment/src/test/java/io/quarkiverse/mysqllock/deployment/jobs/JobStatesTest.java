package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A job's state in the jobs table is obeyed by every instance from its next tick: a paused or disabled job's ticks are
 * claimed and skipped, and none of them runs later, even fired late once the job is active again.
 */
class JobStatesTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class);

    @Inject
    Job job;

    @BeforeEach
    void clear() {
        job.runs().clear();
    }

    @Test
    void aPausedJobSkipsItsTicksUntilItIsActiveAgain() {
        job.paused(Ticks.at(100_000));
        ServerState.update("UPDATE mysql_lock_job SET state = 'PAUSED' WHERE name = 'states:paused'");
        job.paused(Ticks.at(101_000));
        job.paused(Ticks.at(102_000));
        assertThat(ServerState.queryLong("SELECT latest_tick FROM mysql_lock_job WHERE name = 'states:paused'"))
                .as("the paused ticks are claimed").isEqualTo(102_000);
        ServerState.update("UPDATE mysql_lock_job SET state = 'ACTIVE' WHERE name = 'states:paused'");
        job.paused(Ticks.at(103_000));
        job.paused(Ticks.at(102_000)); // a late fire of a paused tick
        assertThat(job.runs()).containsExactly("paused@100000", "paused@103000");
    }

    @Test
    void aDisabledJobSkipsItsTicksUntilItIsEnabled() {
        job.disabled(Ticks.at(200_000));
        ServerState.update("UPDATE mysql_lock_job SET state = 'DISABLED' WHERE name = 'states:disabled'");
        job.disabled(Ticks.at(201_000));
        ServerState.update("UPDATE mysql_lock_job SET state = 'ACTIVE' WHERE name = 'states:disabled'");
        job.disabled(Ticks.at(201_000));
        job.disabled(Ticks.at(202_000));
        assertThat(job.runs()).containsExactly("disabled@200000", "disabled@202000");
    }

    /** A state this version does not know (written by a later one, say) runs nothing. */
    @Test
    void anUnknownStateRunsNothing() {
        job.unknown(Ticks.at(300_000));
        ServerState.update("UPDATE mysql_lock_job SET state = 'DRAINING' WHERE name = 'states:unknown'");
        job.unknown(Ticks.at(301_000));
        assertThat(job.runs()).containsExactly("unknown@300000");
    }

    @ApplicationScoped
    public static class Job {

        final List<String> runs = new CopyOnWriteArrayList<>();

        List<String> runs() {
            return runs;
        }

        @Locked(value = "states:paused", onBusy = OnBusy.SKIP)
        public void paused(ScheduledExecution execution) {
            runs.add("paused@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "states:disabled", onBusy = OnBusy.SKIP)
        public void disabled(ScheduledExecution execution) {
            runs.add("disabled@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "states:unknown", onBusy = OnBusy.SKIP)
        public void unknown(ScheduledExecution execution) {
            runs.add("unknown@" + execution.getScheduledFireTime().toEpochMilli());
        }
    }
}
