package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/** quarkus.mysql-lock.datasource picks a named datasource; the default one may not even exist. */
class NamedDataSourceTest {

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .withApplicationRoot(jar -> jar.addClasses(ServerState.class))
            .overrideConfigKey("quarkus.datasource.locks.db-kind", "mysql")
            .overrideConfigKey("quarkus.datasource.locks.jdbc.url", TestDatabase.shared().jdbcUrl())
            .overrideConfigKey("quarkus.datasource.locks.username", TestDatabase.shared().user())
            .overrideConfigKey("quarkus.datasource.locks.password", TestDatabase.shared().password())
            .overrideConfigKey("quarkus.datasource.locks.devservices.enabled", "false")
            .overrideConfigKey("quarkus.mysql-lock.datasource", "locks");

    @Inject
    LockManager locks;

    @Test
    void locksLiveInTheNamedDataSource() {
        try (LockHandle handle = locks.acquire("named-ds:a", Duration.ZERO)) {
            assertThat(ServerState.holder("named-ds:a")).isPresent();
        }
    }
}
