package io.quarkiverse.mysqllock.deployment.jobs;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;

/** Queue-one in the in-memory engine ({@code quarkus.mysql-lock.in-memory}), which keeps it as the tables do. */
class InMemoryQueueOneTest extends QueueOneContract {

    @RegisterExtension
    static final QuarkusUnitTest app = app(new QuarkusUnitTest()
            .withApplicationRoot(jar -> jar.addClasses(QueueOneContract.class, Job.class, LockApp.class,
                    ServerState.class))
            .overrideConfigKey("quarkus.mysql-lock.in-memory", "true")
            .overrideConfigKey("quarkus.datasource.devservices.enabled", "false"));

    /** Hides the database's: nothing of these jobs is kept but in this JVM's memory. */
    @BeforeAll
    static void forgetJobs() {
        Job.runs.clear();
    }
}
