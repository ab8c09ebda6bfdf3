package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockEvent;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * A job's lock lost after it was granted and before the job's body began: between the two its run is recorded in the
 * history, a statement a slow or stalled database can hold up. Found by the fault suite's scheduling scenario: a
 * network stall held a run's statements until its NAMED session had failed and another instance ran the next ticks,
 * then the first one's body ran all the same, beside them. The body must not run without its lock: the run is
 * recorded as lost, and its caller is told.
 */
class LostBeforeItRanTest {

    private static final long TICK = 400_000L * 3_600_000;

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Events.class, Ticks.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "named")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.named.keepalive-interval", "200ms");

    @Inject
    Job job;

    @Inject
    LockManager locks;

    @Test
    void aJobWhoseLockIsLostBeforeItsBodyBeginsDoesNotRun() throws Exception {
        notRunWhenLostBeforeItBegins("lost:before", tick -> job.run(Ticks.at(tick)));
    }

    @Test
    void anAsynchronousJobWhoseLockIsLostBeforeItsBodyBeginsDoesNotRun() throws Exception {
        notRunWhenLostBeforeItBegins("lost:uni", tick -> job.runUni(Ticks.at(tick)).await().atMost(Duration.ofSeconds(60)));
    }

    @BeforeEach
    void forget() {
        Job.ran.clear();
    }

    private void notRunWhenLostBeforeItBegins(String name, java.util.function.LongConsumer fire) throws Exception {
        ServerState.forgetJobs(name);
        fire.accept(TICK); // its first run makes the job's rows and the history table
        assertThat(Job.ran).containsExactly(name + "@" + TICK);
        long grants = Events.of(name, LockEvent.Kind.ACQUIRED);
        try (Connection blocker = TestDatabase.shared().connect(); Statement statement = blocker.createStatement()) {
            statement.execute("LOCK TABLES mysql_lock_run WRITE"); // the next run's history row waits
            CompletableFuture<Void> call;
            try {
                call = Background.run(() -> fire.accept(TICK + 3_600_000));
                // granted to the client (not only on the server: a KILL before the client read the grant would fail
                // the acquisition instead), its run's history row waiting
                LockApp.await("the lock granted, its run's row waiting", Duration.ofSeconds(30),
                        () -> Events.of(name, LockEvent.Kind.ACQUIRED) > grants);
                TestDatabase.shared().kill(ServerState.holder(name).orElseThrow());
                LockApp.await("the loss to be noticed", Duration.ofSeconds(30),
                        () -> Events.of(name, LockEvent.Kind.LOST) > 0);
            } finally {
                statement.execute("UNLOCK TABLES");
            }
            assertThatThrownBy(() -> call.get(60, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(LockLostException.class).cause().hasMessageContaining("did not run");
        }
        assertThat(Job.ran).as("the body never ran without its lock").containsExactly(name + "@" + TICK);
        List<JobRun> history = locks.jobs().history(name, 10);
        assertThat(history).extracting(JobRun::outcome).containsExactly(RunOutcome.LOST, RunOutcome.SUCCEEDED);
        assertThat(ServerState.holder(name)).as("the lock released").isEmpty();
    }

    @ApplicationScoped
    public static class Job {
        // static: the test reads it past the bean's client proxy
        static final List<String> ran = new CopyOnWriteArrayList<>();

        @Locked(value = "lost:before", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void run(ScheduledExecution execution) {
            ran.add("lost:before@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "lost:uni", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public Uni<Void> runUni(ScheduledExecution execution) {
            ran.add("lost:uni@" + execution.getScheduledFireTime().toEpochMilli());
            return Uni.createFrom().voidItem();
        }
    }

    @ApplicationScoped
    public static class Events {
        static final List<LockEvent> seen = new CopyOnWriteArrayList<>();

        void on(@Observes LockEvent event) {
            seen.add(event);
        }

        static long of(String name, LockEvent.Kind kind) {
            return seen.stream().filter(event -> event.name().equals(name) && event.kind() == kind).count();
        }
    }
}
