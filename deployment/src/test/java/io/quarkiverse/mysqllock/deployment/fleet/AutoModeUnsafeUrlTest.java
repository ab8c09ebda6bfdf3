package io.quarkiverse.mysqllock.deployment.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** A datasource that would drop named locks silently (auto-reconnect) makes AUTO choose LEASE. */
class AutoModeUnsafeUrlTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideConfigKey("quarkus.datasource.jdbc.additional-jdbc-properties.autoReconnect", "true");

    @Inject
    LockManager locks;

    @Test
    void leaseIsChosen() {
        assertThat(locks.mode()).isEqualTo(LockMode.LEASE);
    }
}
