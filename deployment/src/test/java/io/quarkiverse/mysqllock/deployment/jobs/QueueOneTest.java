package io.quarkiverse.mysqllock.deployment.jobs;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** Queue-one on the NAMED engine (the default on a single server). */
class QueueOneTest extends QueueOneContract {

    @RegisterExtension
    static final QuarkusUnitTest app = app(LockApp.app(QueueOneContract.class, Job.class));
}
