package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

class AutoReconnectRefusedTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.mysql-lock.mode", "named")
                    .overrideConfigKey("quarkus.datasource.jdbc.additional-jdbc-properties.autoReconnect", "true"),
            "cannot hold named locks on datasource '<default>'", "autoReconnect=true", "additional-jdbc-properties");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
