package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
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
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.jobs.JobLauncher;
import io.quarkiverse.mysqllock.runtime.jobs.JobTick;
import io.quarkus.arc.Arc;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Once the shutdown has begun (the wait for work in progress, {@code shutdown-wait}), no run of a job starts on this
 * instance: a tick it fires is not claimed, left to the fleet, so that the wait ends and no run is cut off by the end
 * of the datasource.
 */
class StoppingJobsTest {

    private static final long HOUR = Duration.ofHours(1).toMillis();
    private static final long BASE = 700_000 * HOUR;

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class);

    @Inject
    LockManager locks;

    @Test
    void onceTheShutdownBeganATickIsNeitherClaimedNorRun() throws Exception {
        ServerState.forgetJobs("stopping:%");
        assertThat(fire(BASE)).isEqualTo(RunOutcome.SUCCEEDED);

        ((MySqlLockManager) locks).awaitWorkInProgress(System.nanoTime()); // as the shutdown's start does
        assertThat(fire(BASE + HOUR)).as("not this instance's to run any more").isNull();
        assertThat(Job.runs).containsExactly(BASE);
        assertThat(ServerState.queryLong("SELECT latest_tick FROM mysql_lock_job WHERE job = ?", "stopping:job"))
                .as("left to the fleet: not claimed").isEqualTo(BASE);
    }

    private RunOutcome fire(long tick) throws Exception {
        JobTick fired = new JobTick(tick, RunKind.SCHEDULED, new CompletableFuture<>());
        Arc.container().instance(JobLauncher.class).get().launch(((MySqlLockManager) locks).dataSourceName(),
                "stopping:job", fired);
        fired.settled().get(60, TimeUnit.SECONDS);
        return fired.outcome().get();
    }

    @ApplicationScoped
    public static class Job {
        static final List<Long> runs = new CopyOnWriteArrayList<>();

        @Locked(value = "stopping:job", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void run(ScheduledExecution execution) {
            runs.add(execution.getScheduledFireTime().toEpochMilli());
        }
    }
}
