package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The longest renewal interval the start accepts for a 3 s ttl ({@code ttl / 2 - loss margin} = 1250 ms), with a
 * short keepalive: a lease held on healthy infrastructure is renewed, and so is the instance's membership of its fleet,
 * so nothing is ever reported lost. (It was: the membership counted as lapsed a renewal interval before its end, so
 * that its first renewal, 1.5 intervals after the start, came too late, and every lease held was lost with it.)
 */
class RenewalAtTheEdgeKeepsLeasesTest {

    static final Duration TTL = Duration.ofSeconds(3);
    static final Duration RENEW = Duration.ofMillis(1250);

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.lease.ttl", TTL.toMillis() + "ms")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.lease.renew-interval", RENEW.toMillis() + "ms")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.named.keepalive-interval", "500ms");

    @Inject
    LockManager locks;

    @Test
    void aLeaseHeldThroughManyRenewalsIsNeverReportedLost() {
        CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
        try (LockHandle handle = locks.acquire("edge:held", Duration.ZERO)) {
            handle.onLost(lost::add);
            // the server's clock shows four renewals at least: several of the membership's came and went meanwhile
            LockApp.await("four renewals of the lease", Duration.ofSeconds(60), () -> !lost.isEmpty()
                    || ServerState.queryLong("SELECT TIMESTAMPDIFF(MICROSECOND, acquired_at, expires_at) FROM mysql_lock"
                            + " WHERE name = 'edge:held'") > TTL.plus(RENEW.multipliedBy(4)).toNanos() / 1000);
            assertThat(lost).as("losses reported with no fault").isEmpty();
            assertThat(handle.isValid()).isTrue();
        }
    }
}
