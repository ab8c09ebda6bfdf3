package io.quarkiverse.mysqllock.deployment.jobs;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkus.test.QuarkusUnitTest;

/** Missed ticks on the LEASE engine. */
class LeaseMissedTicksTest extends MissedTicksContract {

    @RegisterExtension
    static final QuarkusUnitTest app = app(LockApp.app(MissedTicksContract.class, Job.class, Ticks.class))
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease");
}
