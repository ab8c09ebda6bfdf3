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

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The NAMED engine (chosen by AUTO on a standalone server) ends a hold at its {@code atMostFor} cap, and
 * {@code interruptOnLoss} stops the work running under a lock that was lost, then leaves its thread as it found it.
 */
class LockedCapTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Jobs.class);

    @Inject
    Jobs jobs;

    @Inject
    LockManager locks;

    /**
     * The 1 s cap ends on the product's clock: a lock found free after it may have ended proves nothing, and the check
     * is made again on a lock of its own.
     */
    @Test
    void atMostForEndsTheNamedLockOfAMethodThatStillRuns() throws Exception {
        LockApp.conclusively("the lock checked held before its cap", attempt -> {
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
                LockApp.await("the cap to end the lock", Duration.ofSeconds(30), () -> LockApp.freeFor(locks, name));
                assertThat(run).isNotDone(); // not interrupted: the method runs on until it returns
            } finally {
                leave.countDown();
            }
            assertThatThrownBy(() -> run.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class)
                    .cause().satisfies(e -> assertThat(((LockLostException) e).reason())
                            .isEqualTo(LockLostException.Reason.LEASE_EXPIRED));
            return true;
        });
    }

    @Test
    void interruptOnLossStopsTheMethodAndClearsTheInterruptItCaused() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        CompletableFuture<Boolean> run = Background.supply(() -> {
            try {
                jobs.interrupted(never);
                return null;
            } catch (LockLostException e) {
                assertThat(e.reason()).isEqualTo(LockLostException.Reason.LEASE_EXPIRED);
                return Thread.currentThread().isInterrupted();
            }
        });
        // well before the latch's 60 s: the cap interrupted the wait
        assertThat(run.get(30, TimeUnit.SECONDS)).as("the thread is left uninterrupted").isFalse();
        assertThat(jobs.sawInterrupt()).isTrue();
        assertThat(never.getCount()).isEqualTo(1);
    }

    @Test
    void programmaticHoldsInterruptTheirThreadOnLossUntilReleased() throws Exception {
        CompletableFuture<String> run = Background.supply(() -> {
            try (LockHandle lock = locks.acquire("job:programmatic",
                    LockOptions.defaults().holdingAtMost(Duration.ofSeconds(1)).interruptingOnLoss())) {
                new CountDownLatch(1).await(60, TimeUnit.SECONDS);
                return "not interrupted";
            } catch (InterruptedException e) {
                return "interrupted, flag " + Thread.currentThread().isInterrupted();
            }
        });
        assertThat(run.get(30, TimeUnit.SECONDS)).isEqualTo("interrupted, flag false");
        // released before any loss: nothing interrupts the thread later
        CompletableFuture<Boolean> quiet = Background.supply(() -> {
            LockHandle lock = locks.acquire("job:released",
                    LockOptions.defaults().holdingAtMost(Duration.ofSeconds(1)).interruptingOnLoss());
            lock.release();
            try {
                return !new CountDownLatch(1).await(1500, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return false;
            }
        });
        assertThat(quiet.get(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void onlyABlockingCallerHasAThreadToInterrupt() {
        assertThatThrownBy(() -> locks.acquireAsync("job:async", LockOptions.defaults().interruptingOnLoss()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("interruptingOnLoss");
    }

    @ApplicationScoped
    public static class Jobs {
        private volatile boolean sawInterrupt;

        public boolean sawInterrupt() {
            return sawInterrupt;
        }

        @Locked(value = "job:capped-{0}", atMostFor = "1s")
        public void capped(int attempt, CountDownLatch entered, CountDownLatch leave) {
            entered.countDown();
            try {
                if (!leave.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the method return");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Locked(value = "job:interrupted", atMostFor = "1s", interruptOnLoss = true)
        public void interrupted(CountDownLatch never) {
            try {
                never.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                sawInterrupt = true;
                Thread.currentThread().interrupt(); // as well-behaved code does: the interceptor clears it
            }
        }
    }
}
