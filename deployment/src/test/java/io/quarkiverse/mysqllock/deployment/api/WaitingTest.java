package io.quarkiverse.mysqllock.deployment.api;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.WaitAssertions;
import io.quarkus.test.QuarkusUnitTest;

/** Waiting is done by the server: MariaDB semantics, fractional waits passed to GET_LOCK. */
class WaitingTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(WaitAssertions.class);

    @Inject
    LockManager locks;

    @Test
    void aWaiterGetsTheLockRightAfterTheHolderReleases() throws Exception {
        WaitAssertions.waiterWakesPromptly(locks, "wait:handoff");
    }

    @Test
    void subSecondWaitsTimeOutCloseToTheirDuration() throws Exception {
        WaitAssertions.timesOutCloseTo(locks, "wait:short", Duration.ofMillis(300));
    }

    @Test
    void wholeAndFractionalSecondWaitsTimeOutCloseToTheirDuration() throws Exception {
        WaitAssertions.timesOutCloseTo(locks, "wait:long", Duration.ofMillis(1300));
    }
}
