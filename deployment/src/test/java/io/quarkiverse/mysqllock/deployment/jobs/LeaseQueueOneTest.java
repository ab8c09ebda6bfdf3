package io.quarkiverse.mysqllock.deployment.jobs;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** Queue-one on the LEASE engine. */
class LeaseQueueOneTest extends QueueOneContract {

    @RegisterExtension
    static final QuarkusUnitTest app = app(LockApp.app(QueueOneContract.class, Job.class))
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease");
}
