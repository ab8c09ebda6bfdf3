package io.quarkiverse.mysqllock.deployment.api;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.WaitAssertions;
import io.quarkus.test.QuarkusUnitTest;

/**
 * MySQL semantics: GET_LOCK truncates its timeout to whole seconds, so the engine waits whole seconds on the server and
 * polls the rest. Forced here on MariaDB, which accepts integer timeouts the same way.
 */
class WholeSecondWaitTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(WaitAssertions.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.server-flavor", "mysql");

    @Inject
    LockManager locks;

    @Test
    void aWaiterGetsTheLockRightAfterTheHolderReleases() throws Exception {
        WaitAssertions.waiterWakesPromptly(locks, "whole:handoff");
    }

    @Test
    void subSecondWaitsAreNotRoundedUp() throws Exception {
        WaitAssertions.timesOutCloseTo(locks, "whole:short", Duration.ofMillis(300));
    }

    @Test
    void fractionalSecondsAfterWholeOnesAreWaitedToo() throws Exception {
        WaitAssertions.timesOutCloseTo(locks, "whole:long", Duration.ofMillis(1300));
    }
}
