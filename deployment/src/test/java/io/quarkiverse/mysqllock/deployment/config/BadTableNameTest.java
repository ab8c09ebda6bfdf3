package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

class BadTableNameTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.mysql-lock.table", "locks;DROP TABLE x"),
            "quarkus.mysql-lock.table='locks;DROP TABLE x' is not a valid table name");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
