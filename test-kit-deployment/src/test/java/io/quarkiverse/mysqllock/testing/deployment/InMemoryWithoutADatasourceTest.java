package io.quarkiverse.mysqllock.testing.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code quarkus.mysql-lock.in-memory=true} in an application that configures no datasource: the locks work, and no
 * database is started for it (no db-kind is set, and with two drivers on the class path Quarkus picks none).
 */
class InMemoryWithoutADatasourceTest {

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .withApplicationRoot(jar -> jar.addClass(ContainerRuntime.class))
            .overrideConfigKey("quarkus.mysql-lock.in-memory", "true")
            .addBuildChainCustomizer(ContainerRuntime.told());

    @Inject
    LockManager locks;

    @Test
    void theLocksWorkAndNoDatabaseStarted() {
        try (LockHandle lock = locks.acquire("in-memory:no-datasource", Duration.ofSeconds(1))) {
            assertThat(lock.fencingToken()).isPositive();
        }
        assertThat(ContainerRuntime.embeddedServices()).as("embedded Dev Services produced").isZero();
    }
}
