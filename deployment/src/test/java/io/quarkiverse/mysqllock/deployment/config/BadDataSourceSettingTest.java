package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/** A datasource's own bad setting is refused as the application-wide one is, under the key it was set with. */
class BadDataSourceSettingTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.mysql-lock.\"<default>\".lease.ttl", "100ms"),
            "quarkus.mysql-lock.\"<default>\".lease.ttl=PT0.1S must be at least");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
