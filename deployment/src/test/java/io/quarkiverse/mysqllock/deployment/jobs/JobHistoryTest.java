package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;

/**
 * Each run of a job is a row of its history, written as it starts and completed as it ends, by the instance that ran
 * it; each tick its claimer skipped (the lock busy, the job paused) is a row too. The job's row keeps its last outcome,
 * and when it last succeeded and failed.
 */
class JobHistoryTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class);

    @Inject
    Job job;

    @Inject
    LockManager locks;

    @Test
    void aRunThatReturnsSucceeded() {
        job.succeeding(Ticks.at(1_000));
        job.succeeding(Ticks.at(1_000)); // claimed: no second row
        assertThat(rows("history:succeeding")).isEqualTo("SCHEDULED 1000 SUCCEEDED ended");
        assertThat(ServerState.queryString("SELECT instance FROM mysql_lock_run WHERE name = 'history:succeeding'"))
                .as("the holder identity of the instance that ran it").contains("/");
        assertThat(ServerState.queryString("SELECT CONCAT(last_outcome, ' ', last_success_at IS NOT NULL, ' ',"
                + " last_failure_at IS NULL, ' ', last_ended_at >= last_started_at) FROM mysql_lock_job"
                + " WHERE name = 'history:succeeding'")).isEqualTo("SUCCEEDED 1 1 1");
    }

    @Test
    void aRunThatThrowsFailedWithTheErrorsClassAndFirstLine() {
        assertThatThrownBy(() -> job.failing(Ticks.at(2_000))).isInstanceOf(IllegalStateException.class);
        assertThat(rows("history:failing")).isEqualTo("SCHEDULED 2000 FAILED ended");
        assertThat(ServerState.queryString("SELECT CONCAT(error_class, ': ', error_message) FROM mysql_lock_run"
                + " WHERE name = 'history:failing'")).isEqualTo("java.lang.IllegalStateException: the report failed");
        assertThat(ServerState.queryString("SELECT CONCAT(last_outcome, ' ', last_failure_at IS NOT NULL, ' ',"
                + " last_success_at IS NULL) FROM mysql_lock_job WHERE name = 'history:failing'"))
                .isEqualTo("FAILED 1 1");
        assertThat(locks.jobs().history("history:failing", 5)).singleElement().satisfies(run -> {
            assertThat(run.job()).isEqualTo("history:failing");
            assertThat(run.tick()).isEqualTo(Instant.ofEpochMilli(2_000));
            assertThat(run.kind()).isEqualTo(RunKind.SCHEDULED);
            assertThat(run.outcome()).isEqualTo(RunOutcome.FAILED);
            assertThat(run.errorClass()).isEqualTo(IllegalStateException.class.getName());
            assertThat(run.errorMessage()).isEqualTo("the report failed");
            assertThat(run.duration()).hasValueSatisfying(took -> assertThat(took.isNegative()).isFalse());
        });
        assertThat(locks.jobs().job("history:failing")).hasValueSatisfying(job -> {
            assertThat(job.state()).isEqualTo(JobState.ACTIVE);
            assertThat(job.lastOutcome()).isEqualTo(RunOutcome.FAILED);
            assertThat(job.lastFailure()).isNotNull().isEqualTo(job.lastEnded());
            assertThat(job.lastSuccess()).isNull();
        });
    }

    /** The API lists the fleet's jobs, reads one, and its history the latest first, however many ran elsewhere. */
    @Test
    void theApiReadsTheJobsAndTheirHistoryTheLatestFirst() {
        job.listed(Ticks.at(10_000, Instant.parse("2026-12-02T10:00:00.123456Z")));
        job.listed(Ticks.at(11_000)); // a trigger that does not say leaves what the last one said
        assertThat(locks.jobs().history("history:listed", 1)).extracting(run -> run.tick().toEpochMilli())
                .containsExactly(11_000L);
        assertThat(locks.jobs().history("history:listed", 10)).extracting(run -> run.tick().toEpochMilli())
                .containsExactly(11_000L, 10_000L);
        assertThat(locks.jobs().jobs()).extracting(JobInfo::name).contains("history:listed")
                .doesNotContain("never-claimed");
        assertThat(locks.jobs().job("history:listed").orElseThrow().nextFire()).as("the trigger's next fire time")
                .isEqualTo(Instant.parse("2026-12-02T10:00:00.123456Z"));
        assertThat(locks.jobs().job("never-claimed")).isEmpty();
        assertThat(locks.jobs().history("never-claimed", 10)).isEmpty();
        assertThatThrownBy(() -> locks.jobs().history("history:succeeding", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ask for 1 or more");
    }

    /** The claim of a tick whose lock stays busy is given back: a later fire of the tick runs it. */
    @Test
    void aTickWhoseLockStaysBusyIsSkippedBusyAndRunsWhenFiredAgain() throws Exception {
        try (LockHandle held = locks.acquire("history:busy")) {
            Background.run(() -> job.busy(Ticks.at(3_000))).get(30, TimeUnit.SECONDS);
        }
        assertThat(rows("history:busy")).isEqualTo("SCHEDULED 3000 SKIPPED_BUSY ended");
        job.busy(Ticks.at(3_000));
        assertThat(rows("history:busy")).isEqualTo("SCHEDULED 3000 SKIPPED_BUSY ended, SCHEDULED 3000 SUCCEEDED ended");
    }

    /**
     * A lock not had for another reason (here its wait interrupted) gives the claim back too, with the error in the
     * row. The lock is held by another session, so that the tick waits for it on the server.
     */
    @Test
    void aTickWhoseLockCannotBeHadIsNotAcquiredAndRunsWhenFiredAgain() throws Exception {
        try (Connection other = TestDatabase.shared().connect()) {
            assertThat(ServerState.queryLongOn(other, "SELECT GET_LOCK('history:interrupted', 0)")).isEqualTo(1);
            AtomicReference<Thread> runner = new AtomicReference<>();
            CompletableFuture<Void> call = Background.run(() -> {
                runner.set(Thread.currentThread());
                assertThatThrownBy(() -> job.interrupted(Ticks.at(8_000)))
                        .isInstanceOf(LockNotAcquiredException.class);
            });
            LockApp.await("the tick to wait for its lock on the server", Duration.ofSeconds(30),
                    () -> ServerState.waitingInGetLock("history:interrupted") > 0 || call.isDone());
            runner.get().interrupt();
            call.get(30, TimeUnit.SECONDS);
            assertThat(ServerState.queryLongOn(other, "SELECT RELEASE_LOCK('history:interrupted')")).isEqualTo(1);
        }
        job.interrupted(Ticks.at(8_000));
        assertThat(rows("history:interrupted"))
                .isEqualTo("SCHEDULED 8000 NOT_ACQUIRED ended, SCHEDULED 8000 SUCCEEDED ended");
        assertThat(ServerState.queryString("SELECT error_class FROM mysql_lock_run WHERE name = 'history:interrupted'"
                + " AND outcome = 'NOT_ACQUIRED'")).isEqualTo(LockNotAcquiredException.class.getName());
    }

    @Test
    void aTickOfAPausedJobIsSkippedPausedOnce() {
        job.paused(Ticks.at(4_000));
        ServerState.update("UPDATE mysql_lock_job SET state = 'PAUSED' WHERE name = 'history:paused'");
        job.paused(Ticks.at(5_000));
        job.paused(Ticks.at(5_000));
        assertThat(rows("history:paused")).isEqualTo("SCHEDULED 4000 SUCCEEDED ended, SCHEDULED 5000 SKIPPED_PAUSED ended");
    }

    @Test
    void aUniRunIsRecordedWhenItsUniEnds() {
        assertThat(job.uni(Ticks.at(6_000)).await().atMost(Duration.ofSeconds(30))).isEqualTo("done");
        LockApp.await("the run's end in its history", Duration.ofSeconds(30),
                () -> "SCHEDULED 6000 SUCCEEDED ended".equals(rows("history:uni")));
    }

    /** A cancellation while the run's {@code Uni} runs ends the run (its lock ends then too). */
    @Test
    void aCancelledUniRunIsCancelled() {
        Cancellable run = job.never(Ticks.at(7_000)).subscribe().with(item -> {
        });
        LockApp.await("the run's start in its history", Duration.ofSeconds(30),
                () -> "SCHEDULED 7000 RUNNING running".equals(rows("history:never")));
        run.cancel();
        LockApp.await("the cancelled run's end in its history", Duration.ofSeconds(30),
                () -> "SCHEDULED 7000 CANCELLED ended".equals(rows("history:never")));
    }

    /**
     * A run whose lock was lost (its server session killed) and that ends only after the next tick's run succeeded: the
     * history has both, and the job's last run stays the one that started last.
     */
    @Test
    void aRunThatEndsAfterALaterRunDoesNotBecomeTheLastRun() throws Exception {
        CompletableFuture<String> first = new CompletableFuture<>();
        CompletableFuture<String> done = job.held(Ticks.at(9_000), first).subscribeAsCompletionStage();
        LockApp.await("the first run to hold its lock", Duration.ofSeconds(30),
                () -> ServerState.holder("history:held").isPresent());
        ServerState.update("KILL CONNECTION " + ServerState.holder("history:held").orElseThrow());
        LockApp.await("the killed session's lock to be free", Duration.ofSeconds(30),
                () -> ServerState.holder("history:held").isEmpty());
        assertThat(job.held(Ticks.at(10_000), CompletableFuture.completedFuture("second")).await()
                .atMost(Duration.ofSeconds(30))).isEqualTo("second");
        first.complete("first");
        done.handle((item, failure) -> item).get(30, TimeUnit.SECONDS); // it may report the loss as it ends
        LockApp.await("the first run's end in its history", Duration.ofSeconds(30),
                () -> "SCHEDULED 9000 LOST ended, SCHEDULED 10000 SUCCEEDED ended".equals(rows("history:held")));
        assertThat(locks.jobs().job("history:held")).hasValueSatisfying(job -> {
            assertThat(job.lastOutcome()).as("the last run to start").isEqualTo(RunOutcome.SUCCEEDED);
            assertThat(job.lastSuccess()).isNotNull();
            assertThat(job.lastFailure()).as("the lost run's end").isNotNull().isAfterOrEqualTo(job.lastSuccess());
            assertThat(job.lastEnded()).isEqualTo(job.lastSuccess());
        });
    }

    /** The job's history, oldest first: kind, tick, outcome, and whether it ended. */
    private static String rows(String job) {
        return ServerState.queryString("SELECT GROUP_CONCAT(CONCAT(kind, ' ', tick, ' ', outcome, ' ',"
                + " IF(ended_at IS NULL, 'running', 'ended')) ORDER BY started_at, id SEPARATOR ', ') FROM mysql_lock_run"
                + " WHERE name = ?", job);
    }

    @ApplicationScoped
    public static class Job {

        @Locked(value = "history:succeeding", onBusy = OnBusy.SKIP)
        public void succeeding(ScheduledExecution execution) {
        }

        @Locked(value = "history:listed", onBusy = OnBusy.SKIP)
        public void listed(ScheduledExecution execution) {
        }

        @Locked(value = "history:failing", onBusy = OnBusy.SKIP)
        public void failing(ScheduledExecution execution) {
            throw new IllegalStateException("the report failed\nat line two");
        }

        @Locked(value = "history:busy", onBusy = OnBusy.SKIP)
        public void busy(ScheduledExecution execution) {
        }

        @Locked(value = "history:interrupted", onBusy = OnBusy.SKIP, waitFor = "30s")
        public void interrupted(ScheduledExecution execution) {
        }

        @Locked(value = "history:paused", onBusy = OnBusy.SKIP)
        public void paused(ScheduledExecution execution) {
        }

        @Locked(value = "history:uni", onBusy = OnBusy.SKIP)
        public Uni<String> uni(ScheduledExecution execution) {
            return Uni.createFrom().item("done");
        }

        @Locked(value = "history:held", onBusy = OnBusy.SKIP)
        public Uni<String> held(ScheduledExecution execution, CompletableFuture<String> end) {
            return Uni.createFrom().completionStage(end);
        }

        @Locked(value = "history:never", onBusy = OnBusy.SKIP)
        public Uni<String> never(ScheduledExecution execution) {
            return Uni.createFrom().nothing();
        }
    }
}
