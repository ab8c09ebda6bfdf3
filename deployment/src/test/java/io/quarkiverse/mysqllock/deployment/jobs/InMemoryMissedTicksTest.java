package io.quarkiverse.mysqllock.deployment.jobs;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.runtime.memory.MemoryJobs;
import io.quarkus.test.QuarkusUnitTest;

/** Missed ticks in the in-memory engine ({@code quarkus.mysql-lock.in-memory}), which keeps them as the tables do. */
class InMemoryMissedTicksTest extends MissedTicksContract {

    @RegisterExtension
    static final QuarkusUnitTest app = app(new QuarkusUnitTest()
            .withApplicationRoot(jar -> jar.addClasses(MissedTicksContract.class, Job.class, Ticks.class,
                    LockApp.class, ServerState.class))
            .overrideConfigKey("quarkus.mysql-lock.in-memory", "true")
            .overrideConfigKey("quarkus.datasource.devservices.enabled", "false"));

    @Inject
    LockManager manager;

    /** Hides the database's: nothing of these jobs is kept but in this JVM's memory. */
    @BeforeAll
    static void forgetJobs() {
        Job.runs.clear();
    }

    @Override
    long pending(String job) {
        return jobs().catchUpTo(((MySqlLockManager) manager).serverName(job));
    }

    @Override
    long settled(String job) {
        return jobs().settled(((MySqlLockManager) manager).serverName(job));
    }

    private MemoryJobs jobs() {
        return ((InMemoryEngine) ((MySqlLockManager) manager).engine()).jobs();
    }
}
