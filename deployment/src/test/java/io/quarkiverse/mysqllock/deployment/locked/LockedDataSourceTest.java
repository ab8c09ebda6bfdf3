package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.agroal.DataSource;
import io.quarkus.test.QuarkusUnitTest;

/** {@code @Locked(datasource = "orders")} takes its lock through the {@code orders} datasource's manager. */
class LockedDataSourceTest {

    @RegisterExtension
    static final QuarkusUnitTest app = withOrders(LockApp.app(Jobs.class));

    static QuarkusUnitTest withOrders(QuarkusUnitTest test) {
        for (Map.Entry<String, String> entry : io.quarkiverse.mysqllock.test.TestDatabase.shared().quarkusConfig()
                .entrySet()) {
            test.overrideConfigKey(entry.getKey().replace("quarkus.datasource.", "quarkus.datasource.\"orders\"."),
                    entry.getValue());
        }
        return test.overrideConfigKey("quarkus.datasource.\"orders\".db-kind", "mysql");
    }

    @Inject
    Jobs jobs;

    @Test
    void theLockIsTakenThroughTheNamedDatasourcesManager() {
        List<List<String>> held = jobs.onOrders();
        assertThat(held.get(0)).as("held by the orders manager").contains("ds:orders");
        assertThat(held.get(1)).as("not by the lock datasource's").doesNotContain("ds:orders");
        List<List<String>> plain = jobs.onDefault();
        assertThat(plain.get(0)).doesNotContain("ds:default");
        assertThat(plain.get(1)).contains("ds:default");
    }

    @ApplicationScoped
    public static class Jobs {
        @Inject
        @DataSource("orders")
        LockManager orders;

        @Inject
        LockManager locks;

        @Locked(value = "ds:orders", datasource = "orders")
        public List<List<String>> onOrders() {
            return List.of(names(orders.held()), names(locks.held()));
        }

        @Locked("ds:default")
        public List<List<String>> onDefault() {
            return List.of(names(orders.held()), names(locks.held()));
        }

        private static List<String> names(List<LockInfo> held) {
            return held.stream().map(LockInfo::name).toList();
        }
    }
}
