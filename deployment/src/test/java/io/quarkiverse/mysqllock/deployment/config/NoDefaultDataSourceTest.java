package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/** Only a named datasource exists and the lock datasource is not set: the build says which ones there are. */
class NoDefaultDataSourceTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(new QuarkusUnitTest()
            .withApplicationRoot(jar -> jar.addClasses(StartupFailure.class))
            .overrideConfigKey("quarkus.datasource.users.db-kind", "mysql")
            .overrideConfigKey("quarkus.datasource.users.jdbc.url", TestDatabase.shared().jdbcUrl())
            .overrideConfigKey("quarkus.datasource.users.devservices.enabled", "false"),
            "No default datasource is configured", "quarkus-jdbc-mysql or quarkus-jdbc-mariadb",
            "quarkus.mysql-lock.datasource", "Configured JDBC datasources: users");

    @Test
    void theApplicationDoesNotBuild() {
        fail("the application started");
    }
}
