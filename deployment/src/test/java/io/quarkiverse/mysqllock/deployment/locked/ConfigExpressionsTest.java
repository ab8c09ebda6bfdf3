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
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code waitFor}, {@code atLeastFor} and {@code atMostFor} take {@code ${property}} and {@code ${property:default}}
 * expressions, as {@code @Scheduled} does, resolved when the application starts.
 */
class ConfigExpressionsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Jobs.class, AtStart.class)
            .overrideRuntimeConfigKey("jobs.cap", "1s")
            .overrideRuntimeConfigKey("jobs.kept", "PT0.8S");

    @Inject
    Jobs jobs;

    @Inject
    LockManager locks;

    @Test
    void theExpressionsAreResolvedBeforeTheApplicationStarts() {
        // a StartupEvent observer called a @Locked method with an expression: resolved by then
        assertThat(AtStart.ran).isTrue();
    }

    @Test
    void aCapFromConfigEndsTheLock() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        CompletableFuture<Void> run = Background.run(() -> jobs.capped(entered, leave));
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        LockApp.await("the configured cap to end the lock", Duration.ofSeconds(30), () -> LockApp.freeFor(locks, "cfg:capped"));
        leave.countDown();
        assertThatThrownBy(() -> run.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockLostException.class);
    }

    @Test
    void aDefaultInTheExpressionIsUsedWhenThePropertyIsNotSet() throws Exception {
        try (LockHandle held = Background.supply(() -> locks.acquire("cfg:waiting")).get(10, TimeUnit.SECONDS)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> jobs.waiting()).isInstanceOf(LockNotAcquiredException.class);
            // ${jobs.wait:1500ms}: waited its default, not zero
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(1400);
        }
    }

    /**
     * The 800 ms keep ends on the product's clock: a check that finds the lock free after it may have ended proves
     * nothing, and is made again on a lock of its own.
     */
    @Test
    void aMinimumFromConfigKeepsTheLock() throws Exception {
        LockApp.conclusively("the configured minimum checked while it lasts", attempt -> {
            String name = "cfg:kept-" + attempt;
            long start = System.nanoTime();
            jobs.kept(attempt);
            boolean free = LockApp.otherThreadAcquires(locks, name);
            if (free && LockApp.millisSince(start) >= 800) {
                return false;
            }
            assertThat(free).as("kept after the method returned").isFalse();
            LockApp.await("the configured minimum to pass", Duration.ofSeconds(30), () -> LockApp.freeFor(locks, name));
            return true;
        });
    }

    @ApplicationScoped
    public static class AtStart {
        static volatile boolean ran;

        void onStart(@jakarta.enterprise.event.Observes io.quarkus.runtime.StartupEvent event, Jobs jobs) {
            jobs.atStart();
            ran = true;
        }
    }

    @ApplicationScoped
    public static class Jobs {
        @Locked(value = "cfg:at-start", waitFor = "${jobs.start-wait:1s}")
        public void atStart() {
        }

        @Locked(value = "cfg:capped", atMostFor = "${jobs.cap}")
        public void capped(CountDownLatch entered, CountDownLatch leave) {
            entered.countDown();
            try {
                if (!leave.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the method return");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Locked(value = "cfg:waiting", waitFor = "${jobs.wait:1500ms}")
        public void waiting() {
        }

        @Locked(value = "cfg:kept-{0}", atLeastFor = "${jobs.kept}")
        public void kept(int attempt) {
        }
    }
}
