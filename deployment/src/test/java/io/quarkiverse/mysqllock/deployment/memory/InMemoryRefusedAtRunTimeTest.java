package io.quarkiverse.mysqllock.deployment.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The deprecated {@code quarkus.mysql-lock.mode=in-memory} set only at run time (an environment variable, a system property) on
 * an
 * application built for a database: a manager is made in memory in tests and dev mode, and refused in production.
 */
class InMemoryRefusedAtRunTimeTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void aProductionApplicationRefusesIt() {
        LaunchMode running = LaunchMode.current();
        LaunchMode.set(LaunchMode.NORMAL);
        try {
            assertThatThrownBy(() -> StandaloneLocks.Settings.of("in-memory-prod").mode(Mode.IN_MEMORY).start())
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("keep locks in one JVM's memory")
                    .hasMessageContaining("tests and dev mode only");
        } finally {
            LaunchMode.set(running);
        }
    }

    @Test
    void aTestApplicationGetsItInMemory() {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("in-memory-test").mode(Mode.IN_MEMORY).start()) {
            assertThat(instance.locks.engine()).isInstanceOf(InMemoryEngine.class);
        }
    }
}
