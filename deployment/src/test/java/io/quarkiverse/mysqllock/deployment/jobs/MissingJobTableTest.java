package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With table creation disabled, a missing jobs table fails the tick with the DDL to run (the lock table's name, with
 * {@code _job}), and creates nothing.
 */
class MissingJobTableTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class)
            .setBeforeAllCustomizer(() -> {
                TestDatabase.shared().execute(new LockTable("no_jobs_lock", true).ddl());
                TestDatabase.shared().execute("DROP TABLE IF EXISTS no_jobs_lock_job");
            })
            .overrideRuntimeConfigKey("quarkus.mysql-lock.table", "no_jobs_lock")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.create-table", "false");

    @Inject
    Job job;

    @Test
    void theTickFailsWithTheDdlToRun() {
        assertThatThrownBy(() -> job.run(Ticks.at(7_000))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("The jobs table 'no_jobs_lock_job' does not exist")
                .hasMessageContaining("quarkus.mysql-lock.create-table=false")
                .hasMessageContaining("CREATE TABLE IF NOT EXISTS no_jobs_lock_job (");
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME ="
                + " 'no_jobs_lock_job'")).isZero();
    }

    @ApplicationScoped
    public static class Job {

        @Locked(value = "missing:job", onBusy = OnBusy.SKIP)
        public void run(ScheduledExecution execution) {
            throw new AssertionError("no tick runs without the jobs table");
        }
    }
}
