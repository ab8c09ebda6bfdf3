package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/** A max-clock-skew that would make holders count their leases lost before the next renewal is refused at start. */
class ClockSkewLeavesNoRenewalTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.mysql-lock.lease.max-clock-skew", "20s"),
            "quarkus.mysql-lock.lease.max-clock-skew=20000ms leaves no time to renew a lease");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
