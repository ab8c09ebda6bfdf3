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

/** @Locked on the LEASE engine (1 s ttl): leases are renewed while the method runs, unless atMostFor caps them. */
class LockedLeaseTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Jobs.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.lease.ttl", "1s");

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
        LockApp.await("renewals past 2 ttls", Duration.ofSeconds(6), () -> ServerState.queryLong(
                "SELECT TIMESTAMPDIFF(MICROSECOND, acquired_at, expires_at) FROM mysql_lock WHERE name = 'job:renewed'") > 2_000_000);
        assertThat(LockApp.otherThreadAcquires(locks, "job:renewed")).isFalse();
        leave.countDown();
        run.get(10, TimeUnit.SECONDS);
        assertThat(LockApp.otherThreadAcquires(locks, "job:renewed")).isTrue();
    }

    @Test
    void atMostForCapsTheLeaseEvenWhileTheMethodRuns() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        CompletableFuture<Void> run = Background.run(() -> jobs.capped(entered, leave));
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(LockApp.otherThreadAcquires(locks, "job:capped")).isFalse();
        long start = System.nanoTime();
        LockApp.await("the capped lease to expire", Duration.ofSeconds(5),
                () -> LockApp.freeFor(locks, "job:capped"));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2500);
        leave.countDown();
        // the method outlived its lease: its caller is told, as for any loss
        assertThatThrownBy(() -> run.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class)
                .cause().satisfies(e -> assertThat(((LockLostException) e).reason())
                        .isEqualTo(LockLostException.Reason.LEASE_EXPIRED));
    }

    @ApplicationScoped
    public static class Jobs {
        @Locked("job:renewed")
        public void renewed(CountDownLatch entered, CountDownLatch leave) {
            entered.countDown();
            await(leave);
        }

        @Locked(value = "job:capped", atMostFor = "1s")
        public void capped(CountDownLatch entered, CountDownLatch leave) {
            entered.countDown();
            await(leave);
        }

        private static void await(CountDownLatch latch) {
            try {
                latch.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
