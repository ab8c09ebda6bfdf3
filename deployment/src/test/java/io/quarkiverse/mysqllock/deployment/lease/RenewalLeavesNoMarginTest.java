package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A renewal interval so close to the ttl that holders would count their leases lost (a loss margin before their end)
 * before the next renewal is refused at start.
 */
class RenewalLeavesNoMarginTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.mysql-lock.mode", "lease")
                    .overrideConfigKey("quarkus.mysql-lock.lease.ttl", "10s")
                    .overrideConfigKey("quarkus.mysql-lock.lease.renew-interval", "9800ms"),
            "quarkus.mysql-lock.lease.renew-interval=9800ms leaves no time to renew a lease");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
