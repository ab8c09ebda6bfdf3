package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.agroal.DataSource;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code quarkus.mysql-lock."orders".*} sets the locks of datasource {@code orders} apart: its engine, lock table and
 * lease ttl here, while the application-wide settings still apply to it where it sets nothing (the default wait) and to
 * the default datasource.
 */
class DataSourceSettingsTest {

    static final TestDatabase DB = TestDatabase.shared();

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideConfigKey("quarkus.datasource.orders.db-kind", "mysql")
            .overrideConfigKey("quarkus.datasource.orders.jdbc.url", ordersSchema())
            .overrideConfigKey("quarkus.datasource.orders.username", DB.user())
            .overrideConfigKey("quarkus.datasource.orders.password", DB.password())
            .overrideConfigKey("quarkus.datasource.orders.devservices.enabled", "false")
            .overrideConfigKey("quarkus.mysql-lock.mode", "named")
            .overrideConfigKey("quarkus.mysql-lock.default-wait", "3s")
            .overrideConfigKey("quarkus.mysql-lock.\"orders\".mode", "lease")
            .overrideConfigKey("quarkus.mysql-lock.\"orders\".table", "order_locks")
            .overrideConfigKey("quarkus.mysql-lock.\"orders\".lease.ttl", "7s");

    @Inject
    LockManager locks;

    @Inject
    @DataSource("orders")
    LockManager orderLocks;

    private static String ordersSchema() {
        DB.execute("CREATE DATABASE IF NOT EXISTS orders_settings");
        return DB.jdbcUrl().replaceFirst("/[^/?]*(\\?|$)", "/orders_settings$1");
    }

    @Test
    void aDatasourceHasItsOwnSettingsOverTheApplicationsOnes() throws Exception {
        assertThat(locks.mode()).isEqualTo(LockMode.NAMED);
        assertThat(orderLocks.mode()).as("quarkus.mysql-lock.\"orders\".mode").isEqualTo(LockMode.LEASE);
        try (LockHandle lease = orderLocks.acquire("ds-settings:x", Duration.ZERO)) {
            long remainingMillis = ServerState.queryLong("SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at)"
                    + " DIV 1000 FROM orders_settings.order_locks WHERE name = 'ds-settings:x'");
            assertThat(remainingMillis).as("its lease, in its own table, of its own ttl").isBetween(1L, 7_000L);

            // the application-wide default wait (3 s) applies to it too: a second holder waits, then is refused
            long start = System.nanoTime();
            assertThat(io.quarkiverse.mysqllock.test.Background.supply(() -> {
                try {
                    orderLocks.acquire("ds-settings:x").release();
                    return "acquired";
                } catch (io.quarkiverse.mysqllock.LockNotAcquiredException e) {
                    return e.reason().name();
                }
            }).get()).isEqualTo("BUSY");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(2_900));
        }
    }
}
