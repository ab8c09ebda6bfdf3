package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/** Settings of a datasource the application does not have (a typo) fail the start instead of being ignored. */
class UnknownDataSourceSettingsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.mysql-lock.\"ordres\".mode", "lease"),
            "quarkus.mysql-lock.\"ordres\".* names no MySQL or MariaDB datasource of this application",
            "datasources with locks: <default>");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
