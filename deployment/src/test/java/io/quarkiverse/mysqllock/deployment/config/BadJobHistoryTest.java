package io.quarkiverse.mysqllock.deployment.config;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/** A job history that would keep nothing is refused at start, naming the key. */
class BadJobHistoryTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.mysql-lock.job-history.keep-runs", "0"),
            "quarkus.mysql-lock.job-history.keep-runs=0 must be 1 or more");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
