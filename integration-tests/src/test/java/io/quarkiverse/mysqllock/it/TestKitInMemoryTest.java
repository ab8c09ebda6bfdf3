package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * The same tests on the in-memory engine (quarkus.mysql-lock.in-memory: no database for the locks; the
 * application's other beans still use the embedded server), which answers as LEASE does.
 */
@QuarkusTest
@EmbeddedMariaDb
@TestProfile(TestKitInMemoryTest.Profile.class)
class TestKitInMemoryTest extends TestKitTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.mysql-lock.in-memory", "true", "quarkus.mysql-lock.fenced-commit", "true");
        }
    }

    @Test
    void theLocksAreInMemory() {
        assertThat(((MySqlLockManager) locks).engine())
                .isInstanceOf(InMemoryEngine.class);
    }

    @Override
    @Test
    void pausedRenewalsCostTheLeasesOnLeaseAndNothingOnNamed() {
        assertThatThrownBy(() -> faults.pauseRenewals()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no renewals");
    }

    @Override
    LockMode expectedEngine() {
        return LockMode.LEASE;
    }
}
