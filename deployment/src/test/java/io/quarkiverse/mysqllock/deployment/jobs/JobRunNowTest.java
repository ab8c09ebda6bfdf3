package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

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
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.arc.Arc;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * {@code jobs().runNow}: a job of this application runs once, now, through its {@code @Locked} method on a worker
 * thread (its lock, its history as RUN_NOW), whatever its state, and the request is in its audit trail.
 */
class JobRunNowTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class);

    @Inject
    Job job;

    @Inject
    LockManager locks;

    @Test
    void aJobRunsNowOnceWithItsLockAndIsRecorded() throws Exception {
        long before = System.currentTimeMillis();
        assertThat(outcome(locks.jobs().runNow("now:plain", "alice", "the report is needed now")))
                .isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(Job.runs).singleElement().satisfies(run -> {
            assertThat(run.thread()).as("a worker thread, not the caller's").isNotEqualTo(Thread.currentThread());
            assertThat(run.heldItsLock()).as("the job's lock held while it ran").isTrue();
            assertThat(run.triggerId()).isEqualTo("run_now:now:plain");
            assertThat(run.scheduled()).isBetween(Instant.ofEpochMilli(before), Instant.now());
            assertThat(run.requestContext()).as("a request context, as the scheduler gives one").isTrue();
        });
        assertThat(locks.jobs().history("now:plain", 10)).singleElement().satisfies(run -> {
            assertThat(run.kind()).isEqualTo(RunKind.RUN_NOW);
            assertThat(run.outcome()).isEqualTo(RunOutcome.SUCCEEDED);
            assertThat(run.endedAt()).as("ended in its history once the caller is told").isNotNull();
        });
        assertThat(locks.jobs().changes("now:plain", 10)).singleElement().satisfies(change -> {
            assertThat(change.action()).isEqualTo(JobAction.RUN_NOW);
            assertThat(change.by()).isEqualTo("alice");
            assertThat(change.why()).isEqualTo("the report is needed now");
            assertThat(change.from()).as("the job had no row: it never ticked").isNull();
        });
        assertThat(LockApp.freeFor(locks, "now:plain")).as("its lock released").isTrue();
    }

    /** Run now is an operator's explicit request: a paused job runs, and stays paused. */
    @Test
    void aPausedJobRunsNowAndStaysPaused() throws Exception {
        job.paused(Ticks.at(1_000));
        locks.jobs().pause("now:paused", "ops", null);
        assertThat(outcome(locks.jobs().runNow("now:paused", "ops", null))).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(locks.jobs().job("now:paused").orElseThrow().state()).isEqualTo(JobState.PAUSED);
        assertThat(locks.jobs().changes("now:paused", 1)).singleElement()
                .satisfies(change -> assertThat(change.to()).isEqualTo(JobState.PAUSED));
        assertThat(locks.jobs().job("now:paused").orElseThrow().lastOutcome()).isEqualTo(RunOutcome.SUCCEEDED);
    }

    /** A disabled job runs now too, stays disabled, and its success does not count as one of its schedule's. */
    @Test
    void aDisabledJobRunsNowAndItsSuccessIsNotTheSchedules() throws Exception {
        job.disabled(Ticks.at(1_000));
        ServerState.update("UPDATE mysql_lock_job SET last_success_at = NULL WHERE name = 'now:disabled'");
        locks.jobs().disable("now:disabled", "ops", null);
        assertThat(outcome(locks.jobs().runNow("now:disabled", "ops", null))).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(locks.jobs().job("now:disabled").orElseThrow()).satisfies(info -> {
            assertThat(info.state()).isEqualTo(JobState.DISABLED);
            assertThat(info.lastOutcome()).isEqualTo(RunOutcome.SUCCEEDED);
            assertThat(info.lastSuccess()).as("a run-now says nothing of the schedule").isNull();
        });
    }

    @Test
    void aCompletionStageJobIsToldWhenItCompletes() throws Exception {
        assertThat(outcome(locks.jobs().runNow("now:stage", "ops", null))).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(locks.jobs().history("now:stage", 1)).extracting(JobRun::kind).containsExactly(RunKind.RUN_NOW);
    }

    /** The lock held elsewhere past the job's wait (a run of it lasts on another instance): skipped, and recorded. */
    @Test
    void aJobWhoseLockStaysBusyIsSkippedBusy() throws Exception {
        try (Connection other = TestDatabase.shared().connect()) {
            assertThat(ServerState.queryLongOn(other, "SELECT GET_LOCK('now:busy', 0)")).isEqualTo(1);
            assertThat(outcome(locks.jobs().runNow("now:busy", "ops", null))).isEqualTo(RunOutcome.SKIPPED_BUSY);
            ServerState.queryLongOn(other, "SELECT RELEASE_LOCK('now:busy')");
        }
        assertThat(Job.busyRuns).isZero();
        assertThat(locks.jobs().history("now:busy", 10)).extracting(JobRun::kind, JobRun::outcome)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(RunKind.RUN_NOW, RunOutcome.SKIPPED_BUSY));
    }

    @Test
    void aFailingJobIsToldFailedWithItsErrorInTheHistory() throws Exception {
        assertThat(outcome(locks.jobs().runNow("now:failing", "ops", null))).isEqualTo(RunOutcome.FAILED);
        assertThat(locks.jobs().history("now:failing", 1)).singleElement()
                .satisfies(run -> assertThat(run.errorMessage()).isEqualTo("the import failed"));
    }

    @Test
    void aUniJobIsToldWhenItsUniEnds() throws Exception {
        CompletableFuture<RunOutcome> told = locks.jobs().runNow("now:uni", "ops", null).toCompletableFuture();
        LockApp.await("the Uni job to start", Duration.ofSeconds(30), () -> Job.uniStarted);
        assertThat(told).as("not told while its Uni runs").isNotDone();
        Job.uniEnd.complete("done");
        assertThat(told.get(30, TimeUnit.SECONDS)).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(locks.jobs().history("now:uni", 1)).singleElement()
                .satisfies(run -> assertThat(run.outcome()).isEqualTo(RunOutcome.SUCCEEDED));
    }

    @Test
    void whatCannotRunNowIsRefusedClearlyAndLeavesNothing() {
        assertThatThrownBy(() -> locks.jobs().runNow("now:unknown", "ops", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no job 'now:unknown'")
                .hasMessageContaining("now:plain");
        assertThatThrownBy(() -> locks.jobs().runNow("now:with-arguments", "ops", null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("takes its ScheduledExecution and nothing else");
        assertThatThrownBy(() -> locks.jobs().runNow("now:plain", "", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Say who asks to run now");
        assertThat(locks.jobs().changes("now:unknown", 10)).isEmpty();
        assertThat(locks.jobs().changes("now:with-arguments", 10)).isEmpty();
        assertThat(Job.withArguments).isZero();
    }

    private static RunOutcome outcome(java.util.concurrent.CompletionStage<RunOutcome> told) throws Exception {
        return told.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    record Run(Thread thread, boolean heldItsLock, String triggerId, Instant scheduled, boolean requestContext) {
    }

    @ApplicationScoped
    public static class Job {
        // static: the test reads them past the bean's client proxy
        static final List<Run> runs = new CopyOnWriteArrayList<>();
        static volatile int busyRuns;
        static volatile int withArguments;
        static volatile boolean uniStarted;
        static final CompletableFuture<String> uniEnd = new CompletableFuture<>();

        @Inject
        LockManager locks;

        @Locked(value = "now:plain", onBusy = OnBusy.SKIP)
        public void plain(ScheduledExecution execution) {
            runs.add(new Run(Thread.currentThread(), locks.currentLock().map(held -> held.isValid()).orElse(false),
                    execution.getTrigger().getId(), execution.getScheduledFireTime(),
                    Arc.container().requestContext().isActive()));
        }

        @Locked(value = "now:paused", onBusy = OnBusy.SKIP)
        public void paused(ScheduledExecution execution) {
        }

        @Locked(value = "now:disabled", onBusy = OnBusy.SKIP)
        public void disabled(ScheduledExecution execution) {
        }

        @Locked(value = "now:stage", onBusy = OnBusy.SKIP)
        public java.util.concurrent.CompletionStage<String> stage(ScheduledExecution execution) {
            return CompletableFuture.supplyAsync(() -> "done");
        }

        @Locked(value = "now:busy", onBusy = OnBusy.SKIP)
        public void busy(ScheduledExecution execution) {
            busyRuns++;
        }

        @Locked(value = "now:failing", onBusy = OnBusy.SKIP)
        public void failing(ScheduledExecution execution) {
            throw new IllegalStateException("the import failed\nat line two");
        }

        @Locked(value = "now:uni", onBusy = OnBusy.SKIP)
        public Uni<String> uni(ScheduledExecution execution) {
            uniStarted = true;
            return Uni.createFrom().completionStage(uniEnd);
        }

        @Locked(value = "now:with-arguments", onBusy = OnBusy.SKIP)
        public void withArguments(ScheduledExecution execution, String more) {
            withArguments++;
        }
    }
}
