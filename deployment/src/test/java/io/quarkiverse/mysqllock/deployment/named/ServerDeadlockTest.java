package io.quarkiverse.mysqllock.deployment.named;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The deadlock of {@link DeadlockTest} between two instances without shared connections: each thread's locks are on
 * a connection of its own, so the server sees the cycle (MariaDB error 1213) and breaks it; no instance could.
 */
class ServerDeadlockTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(DeadlockTest.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.named.shared-connections", "0");

    @Inject
    LockManager locks;

    @Test
    void theServerBreaksTheCycleAndTheVictimKeepsItsLocks() throws Exception {
        try (StandaloneLocks other = new StandaloneLocks("other-instance", 0)) {
            DeadlockTest.deadlockIsBroken(locks, other.locks, "the server detected a deadlock");
        }
    }
}
