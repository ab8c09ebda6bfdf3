package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

class RenewNotShorterThanTtlTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.mysql-lock.lease.renew-interval", "30s"),
            "quarkus.mysql-lock.lease.renew-interval=PT30S must be shorter than quarkus.mysql-lock.lease.ttl=PT30S");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
