package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A renewal interval so long that a lease could not be renewed twice before its holder counts it lost (a loss margin
 * before its end) is refused at start: one late renewal would cost every lease.
 */
class RenewalLeavesNoMarginTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.mysql-lock.mode", "lease")
                    .overrideConfigKey("quarkus.mysql-lock.lease.ttl", "10s")
                    .overrideConfigKey("quarkus.mysql-lock.lease.renew-interval", "4900ms"),
            "quarkus.mysql-lock.lease.renew-interval=4900ms leaves no time for a second renewal");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
