package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.agroal.DataSource;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A lock manager per MySQL/MariaDB datasource, injected with {@code @DataSource("name")}, each with its own engine
 * decision: here the default datasource is a plain URL (NAMED) and "orders", in a schema of its own (so a lock table and
 * a fleet of its own), has driver auto-reconnect on (LEASE).
 */
class TwoDataSourcesTest {

    static final TestDatabase DB = TestDatabase.shared();
    static final String ORDERS_URL = ordersSchema();

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideConfigKey("quarkus.datasource.orders.db-kind", "mysql")
            .overrideConfigKey("quarkus.datasource.orders.jdbc.url", ORDERS_URL)
            .overrideConfigKey("quarkus.datasource.orders.username", DB.user())
            .overrideConfigKey("quarkus.datasource.orders.password", DB.password())
            .overrideConfigKey("quarkus.datasource.orders.devservices.enabled", "false")
            .overrideConfigKey("quarkus.datasource.orders.jdbc.additional-jdbc-properties.autoReconnect", "true");

    @Inject
    LockManager locks;

    @Inject
    @DataSource("<default>")
    LockManager sameAsDefault;

    @Inject
    @DataSource("orders")
    LockManager orderLocks;

    @Inject
    @Readiness
    io.quarkiverse.mysqllock.runtime.health.MySqlLockHealthCheck health;

    private static String ordersSchema() {
        DB.execute("CREATE DATABASE IF NOT EXISTS orders_locks");
        return DB.jdbcUrl().replaceFirst("/[^/?]*(\\?|$)", "/orders_locks$1");
    }

    @Test
    void eachDataSourceHasItsOwnManagerAndEngine() throws Exception {
        assertThat(locks.mode()).isEqualTo(LockMode.NAMED);
        assertThat(orderLocks.mode()).isEqualTo(LockMode.LEASE);
        assertThat(sameAsDefault.mode()).isEqualTo(LockMode.NAMED);

        try (LockHandle named = locks.acquire("two-ds:x", Duration.ZERO);
                LockHandle lease = orderLocks.acquire("two-ds:x", Duration.ZERO)) {
            // different lock tables, fleets and engines: a named lock and a lease of the same name are two locks
            assertThat(named.isValid()).isTrue();
            assertThat(lease.isValid()).isTrue();
            assertThat(sameAsDefault.tryAcquire("two-ds:x")).as("the default manager, by either qualifier").isPresent();
        }

        HealthCheckResponse response = health.call();
        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
        assertThat(response.getData().orElseThrow()).containsEntry("<default>: engine", "NAMED")
                .containsEntry("orders: engine", "LEASE");
    }
}
