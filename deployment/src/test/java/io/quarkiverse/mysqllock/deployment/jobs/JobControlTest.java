package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

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
import io.quarkiverse.mysqllock.jobs.JobAction;
import io.quarkiverse.mysqllock.jobs.JobChange;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A job paused, resumed, disabled and enabled for the whole fleet through {@code LockManager.jobs()}: the state is in
 * the jobs table, obeyed at the next tick by whichever instance claims it, and each change is a row of the audit trail
 * with who asked and why, written in the same transaction.
 */
class JobControlTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class);

    @Inject
    Job job;

    @Inject
    LockManager locks;

    @Test
    void aPausedJobSkipsItsTicksUntilResumedAndEachChangeIsAudited() {
        ServerState.update("DROP TABLE IF EXISTS mysql_lock_audit"); // created by the first change
        job.paused(Ticks.at(1_000));
        assertThat(locks.jobs().pause("control:paused", "alice", "the database is being migrated").state())
                .isEqualTo(JobState.PAUSED);
        job.paused(Ticks.at(2_000));
        assertThat(locks.jobs().resume("control:paused", "bob", null).state()).isEqualTo(JobState.ACTIVE);
        job.paused(Ticks.at(3_000));
        assertThat(Job.runs.stream().filter(run -> run.startsWith("paused@"))).containsExactly("paused@1000",
                "paused@3000");
        assertThat(history("control:paused")).isEqualTo("1000 SUCCEEDED, 2000 SKIPPED_PAUSED, 3000 SUCCEEDED");
        List<JobChange> changes = locks.jobs().changes("control:paused", 10);
        assertThat(changes).extracting(JobChange::action, JobChange::from, JobChange::to, JobChange::by, JobChange::why)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(JobAction.RESUME, JobState.PAUSED, JobState.ACTIVE, "bob",
                                null),
                        org.assertj.core.groups.Tuple.tuple(JobAction.PAUSE, JobState.ACTIVE, JobState.PAUSED, "alice",
                                "the database is being migrated"));
        assertThat(changes).allSatisfy(change -> {
            assertThat(change.job()).isEqualTo("control:paused");
            assertThat(change.instance()).as("the holder identity of the instance that made it").contains("/");
            assertThat(change.at()).isNotNull();
        });
        assertThat(locks.jobs().changes("control:paused", 1)).extracting(JobChange::by).containsExactly("bob");
        assertThat(ServerState.queryString("SELECT CONCAT(state, ' ', changed_by, ' ', changed_at IS NOT NULL)"
                + " FROM mysql_lock_job WHERE name = 'control:paused'")).isEqualTo("ACTIVE bob 1");
    }

    @Test
    void aDisabledJobSkipsItsTicksUnrecordedUntilEnabled() {
        job.disabled(Ticks.at(1_000));
        assertThat(locks.jobs().disable("control:disabled", "ops", "replaced by the new importer").state())
                .isEqualTo(JobState.DISABLED);
        job.disabled(Ticks.at(2_000));
        job.disabled(Ticks.at(3_000));
        assertThat(locks.jobs().enable("control:disabled", "ops", "back").state()).isEqualTo(JobState.ACTIVE);
        job.disabled(Ticks.at(4_000));
        assertThat(Job.runs.stream().filter(run -> run.startsWith("disabled@"))).containsExactly("disabled@1000",
                "disabled@4000");
        assertThat(history("control:disabled")).isEqualTo("1000 SUCCEEDED, 4000 SUCCEEDED");
        assertThat(locks.jobs().changes("control:disabled", 10)).extracting(JobChange::action)
                .containsExactly(JobAction.ENABLE, JobAction.DISABLE);
    }

    /** A change that does not apply is refused with what to do instead, and changes and records nothing. */
    @Test
    void aChangeThatDoesNotApplyIsRefusedAndLeavesNothing() {
        job.refused(Ticks.at(1_000));
        locks.jobs().disable("control:refused", "ops", null);
        assertThatThrownBy(() -> locks.jobs().resume("control:refused", "ops", null))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("DISABLED")
                .hasMessageContaining("enable it");
        assertThatThrownBy(() -> locks.jobs().pause("control:refused", "ops", null))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("enable it first");
        locks.jobs().enable("control:refused", "ops", null);
        locks.jobs().pause("control:refused", "ops", null);
        assertThatThrownBy(() -> locks.jobs().enable("control:refused", "ops", null))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("PAUSED")
                .hasMessageContaining("resume it");
        assertThat(locks.jobs().job("control:refused").orElseThrow().state()).isEqualTo(JobState.PAUSED);
        assertThat(locks.jobs().changes("control:refused", 10)).extracting(JobChange::action)
                .containsExactly(JobAction.PAUSE, JobAction.ENABLE, JobAction.DISABLE);
        // a change to the state the job is in is recorded, and changes nothing (not who changed it last)
        assertThat(locks.jobs().pause("control:refused", "someone", "again").state()).isEqualTo(JobState.PAUSED);
        assertThat(locks.jobs().changes("control:refused", 1)).singleElement()
                .satisfies(change -> assertThat(change.from()).isEqualTo(change.to()));
        assertThat(ServerState.queryString("SELECT changed_by FROM mysql_lock_job WHERE name = 'control:refused'"))
                .isEqualTo("ops");
    }

    @Test
    void anUnknownJobOrABadRequestIsRefusedClearly() {
        assertThatThrownBy(() -> locks.jobs().pause("control:never-ran", "ops", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no job 'control:never-ran'")
                .hasMessageContaining("neither has this application");
        assertThat(locks.jobs().job("control:never-ran")).as("no row made for it").isEmpty();
        assertThat(locks.jobs().changes("control:never-ran", 10)).isEmpty();
        job.checked(Ticks.at(1_000));
        assertThatThrownBy(() -> locks.jobs().pause("control:checked", " ", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Say who asks");
        assertThatThrownBy(() -> locks.jobs().pause("control:checked", null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Say who asks");
        assertThatThrownBy(() -> locks.jobs().pause("control:checked", "x".repeat(256), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("255");
        assertThatThrownBy(() -> locks.jobs().pause("control:checked", "ops", "y".repeat(1001)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1001 characters");
        assertThatThrownBy(() -> locks.jobs().changes("control:checked", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ask for 1 or more");
        assertThat(locks.jobs().job("control:checked").orElseThrow().state()).isEqualTo(JobState.ACTIVE);
        assertThat(locks.jobs().changes("control:checked", 10)).isEmpty();
        // a name as long as a lock name may be: 255 characters, the full name kept in the audit trail
        String longName = "control:" + "n".repeat(247);
        job.longName(Ticks.at(1_000));
        assertThat(locks.jobs().pause(longName, "ops", null).name()).isEqualTo(longName);
        assertThat(locks.jobs().changes(longName, 1)).extracting(JobChange::job).containsExactly(longName);
    }

    /** A job of this application that never ticked is paused all the same: its row is made as its first tick would. */
    @Test
    void aJobThatNeverTickedIsPausedBeforeItsFirstTick() {
        assertThat(locks.jobs().job("control:fresh")).isEmpty();
        assertThat(locks.jobs().pause("control:fresh", "ops", "not before the migration").state())
                .isEqualTo(JobState.PAUSED);
        job.fresh(Ticks.at(1_000));
        assertThat(history("control:fresh")).isEqualTo("1000 SKIPPED_PAUSED");
        assertThat(Job.runs).doesNotContain("fresh@1000");
    }

    private static String history(String job) {
        return ServerState.queryString("SELECT GROUP_CONCAT(CONCAT(tick, ' ', outcome) ORDER BY started_at, id"
                + " SEPARATOR ', ') FROM mysql_lock_run WHERE name = ?", job);
    }

    @ApplicationScoped
    public static class Job {
        /** Static: the test reads it past the bean's client proxy. */
        static final List<String> runs = new CopyOnWriteArrayList<>();

        @Locked(value = "control:paused", onBusy = OnBusy.SKIP)
        public void paused(ScheduledExecution execution) {
            runs.add("paused@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "control:disabled", onBusy = OnBusy.SKIP)
        public void disabled(ScheduledExecution execution) {
            runs.add("disabled@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "control:fresh", onBusy = OnBusy.SKIP)
        public void fresh(ScheduledExecution execution) {
            runs.add("fresh@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "control:refused", onBusy = OnBusy.SKIP)
        public void refused(ScheduledExecution execution) {
        }

        @Locked(value = "control:checked", onBusy = OnBusy.SKIP)
        public void checked(ScheduledExecution execution) {
        }

        @Locked(value = "control:nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
                + "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
                + "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn", onBusy = OnBusy.SKIP)
        public void longName(ScheduledExecution execution) {
        }
    }
}
