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
        assertThat(ServerState.queryString("SELECT CONCAT(job, ' ', latest_tick) FROM created_jobs_lock_job"
                + " WHERE name = 'created:job'"))
                .isEqualTo("created:job 5000");
        TestDatabase.shared().execute("DROP TABLE created_jobs_lock_job");
        job.run(Ticks.at(5_000));
        job.run(Ticks.at(6_000));
        assertThat(job.runs()).containsSubsequence("5000", "6000").doesNotHaveDuplicates();
        assertThat(ServerState.queryString("SELECT CONCAT(settled_tick, ' ', latest_tick) FROM created_jobs_lock_job"
                + " WHERE name = 'created:job'"))
                .as("the row started again from the tick row").isEqualTo("5000 6000");
    }

    /**
     * Every job comes back with a table created again, not only the one whose claim met it missing: the others' rows
     * were made sure of before, and a claim that finds no row claims nothing.
     */
    @Test
    void everyJobRunsAgainInATableCreatedAgain() {
        job.first(Ticks.at(20_000));
        job.second(Ticks.at(20_000));
        TestDatabase.shared().execute("DROP TABLE created_jobs_lock_job");
        job.first(Ticks.at(21_000)); // creates the table
        job.second(Ticks.at(21_000));
        assertThat(job.runs()).containsSubsequence("first 20000", "second 20000", "first 21000", "second 21000");
    }

    @ApplicationScoped
    public static class Job {

        final List<String> runs = new CopyOnWriteArrayList<>();

        List<String> runs() {
            return runs;
        }

        @Locked(value = "created:first", onBusy = OnBusy.SKIP)
        public void first(ScheduledExecution execution) {
            runs.add("first " + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "created:second", onBusy = OnBusy.SKIP)
        public void second(ScheduledExecution execution) {
            runs.add("second " + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "created:job", onBusy = OnBusy.SKIP)
        public void run(ScheduledExecution execution) {
            runs.add(String.valueOf(execution.getScheduledFireTime().toEpochMilli()));
        }
    }
}
