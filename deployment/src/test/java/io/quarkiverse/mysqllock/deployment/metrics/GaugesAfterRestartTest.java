package io.quarkiverse.mysqllock.deployment.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.metrics.MicrometerLockMetrics;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An application restarted in the same JVM (dev mode's live reload, test classes with their own resources) registers
 * its gauges again, in Micrometer's global registry, which outlives it: they must read the new engine, not the closed
 * one (the held-locks gauge read 0 with a lock held after a restart).
 */
class GaugesAfterRestartTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void theGaugesOfARestartedManagerReadItsEngine() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        for (int start = 1; start <= 2; start++) {
            try (StandaloneLocks instance = StandaloneLocks.Settings.of("gauges-" + start).mode(Mode.NAMED)
                    .metrics(new MicrometerLockMetrics(registry, "restarted")).start()) {
                try (LockHandle handle = instance.locks.acquire("gauges:held", Duration.ZERO)) {
                    assertThat(registry.get("mysql.lock.held").tag("datasource", "restarted").gauge().value())
                            .as("locks held, by the gauge, at start " + start).isEqualTo(1);
                }
            }
            assertThat(registry.find("mysql.lock.held").tag("datasource", "restarted").gauge())
                    .as("the closed manager's gauge").isNull();
        }
    }
}
