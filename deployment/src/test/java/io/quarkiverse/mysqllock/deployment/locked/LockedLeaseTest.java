package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code @Locked} on the LEASE engine (3 s ttl): leases are renewed while the method runs, unless atMostFor caps them. The ttl
 * is short enough to see renewals within seconds, long enough that a busy machine costs no lease (with 1 s, a renewal
 * 570 ms late lost it, and the test with it: seen on a loaded machine).
 */
class LockedLeaseTest {

    static final Duration TTL = Duration.ofSeconds(3);

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Jobs.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.lease.ttl", TTL.toMillis() + "ms");

    @Inject
    Jobs jobs;

    @Inject
    LockManager locks;

    @Test
    void aLongMethodKeepsItsLeaseWhileItRuns() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        CompletableFuture<Void> run = Background.run(() -> jobs.renewed(entered, leave));
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        LockApp.await("renewals past 2 ttls", Duration.ofSeconds(60), () -> ServerState.queryLong(
                "SELECT TIMESTAMPDIFF(MICROSECOND, acquired_at, expires_at) FROM mysql_lock WHERE name = 'job:renewed'") > TTL
                        .multipliedBy(2).toNanos() / 1000);
        assertThat(LockApp.otherThreadAcquires(locks, "job:renewed")).isFalse();
        leave.countDown();
        run.get(10, TimeUnit.SECONDS);
        assertThat(LockApp.otherThreadAcquires(locks, "job:renewed")).isTrue();
    }

    /**
     * The 1 s cap ends on the product's clock: a lease found free after it may have ended proves nothing, and the check
     * is made again on a lease of its own. A lease renewed past its cap would stay held while the method runs (until
     * the test lets it return): the wait for its expiry, shorter than that, fails then.
     */
    @Test
    void atMostForCapsTheLeaseEvenWhileTheMethodRuns() throws Exception {
        LockApp.conclusively("the lease checked held before its cap", attempt -> {
            String name = "job:capped-" + attempt;
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch leave = new CountDownLatch(1);
            long start = System.nanoTime();
            CompletableFuture<Void> run = Background.run(() -> jobs.capped(attempt, entered, leave));
            try {
                assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
                boolean free = LockApp.otherThreadAcquires(locks, name);
                if (free && LockApp.millisSince(start) >= 1000) {
                    return false;
                }
                assertThat(free).as("free while the method runs, before its cap").isFalse();
                LockApp.await("the capped lease to expire", Duration.ofSeconds(30), () -> LockApp.freeFor(locks, name));
            } finally {
                leave.countDown();
            }
            // the method outlived its lease: its caller is told, as for any loss
            assertThatThrownBy(() -> run.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class)
                    .cause().satisfies(e -> assertThat(((LockLostException) e).reason())
                            .isEqualTo(LockLostException.Reason.LEASE_EXPIRED));
            return true;
        });
    }

    @ApplicationScoped
    public static class Jobs {
        @Locked("job:renewed")
        public void renewed(CountDownLatch entered, CountDownLatch leave) {
            entered.countDown();
            await(leave);
        }

        @Locked(value = "job:capped-{0}", atMostFor = "1s")
        public void capped(int attempt, CountDownLatch entered, CountDownLatch leave) {
            entered.countDown();
            await(leave);
        }

        /** A hold of the test's own, ended when the test says: one it never ends fails loudly, never ends by itself. */
        private static void await(CountDownLatch latch) {
            try {
                if (!latch.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the method return");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
