package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The jobs table is named after the lock table and created at a job's first tick; dropped, it is created again, and the
 * job's row with it: the next tick runs, and a tick that ran before does not (its tick row in the lock table says so).
 */
class JobTableCreationTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class)
            .setBeforeAllCustomizer(() -> TestDatabase.shared().execute("DROP TABLE IF EXISTS created_jobs_lock_job"))
            .overrideRuntimeConfigKey("quarkus.mysql-lock.table", "created_jobs_lock");

    @Inject
    Job job;

    @Test
    void theTableIsCreatedAtTheFirstTickAndAgainWhenDropped() {
        job.run(Ticks.at(5_000));
        assertThat(ServerState.queryString("SELECT CONCAT(job, ' ', latest_tick) FROM created_jobs_lock_job"))
                .isEqualTo("created:job 5000");
        TestDatabase.shared().execute("DROP TABLE created_jobs_lock_job");
        job.run(Ticks.at(5_000));
        job.run(Ticks.at(6_000));
        assertThat(job.runs()).containsExactly("5000", "6000");
        assertThat(ServerState.queryString("SELECT CONCAT(settled_tick, ' ', latest_tick) FROM created_jobs_lock_job"))
                .as("the row started again from the tick row").isEqualTo("5000 6000");
    }

    @ApplicationScoped
    public static class Job {

        final List<String> runs = new CopyOnWriteArrayList<>();

        List<String> runs() {
            return runs;
        }

        @Locked(value = "created:job", onBusy = OnBusy.SKIP)
        public void run(ScheduledExecution execution) {
            runs.add(String.valueOf(execution.getScheduledFireTime().toEpochMilli()));
        }
    }
}
