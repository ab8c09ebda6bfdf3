package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Re-entrancy is for a thread's own call only: a hold that outlives the call that took it (a late release after
 * {@code atLeastFor}, a handle another thread now uses) is not entered again by the thread that took it.
 */
class HoldsOutliveTheirCallTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Cron.class);

    @Inject
    LockManager locks;

    @Inject
    Cron cron;

    @Test
    void aLockWaitingForItsLateReleaseIsNotEnteredAgainByTheSameThread() {
        // a scheduler's worker thread calls the job twice within atLeastFor
        assertThat(cron.tick()).isEqualTo(1);
        assertThat(cron.tick()).as("the second call while the first one's lock waits for its late release").isNull();
        assertThat(cron.runs).hasValue(1);
    }

    @Test
    void aHandleUsedByAnotherThreadIsNoLongerEnteredByTheThreadThatTookIt() throws Exception {
        LockHandle handle = locks.acquire("outlive:passed", Duration.ZERO);
        Background.run(() -> assertThat(handle.isValid()).isTrue()).get();
        Optional<LockHandle> again = locks.tryAcquire("outlive:passed");
        again.ifPresent(LockHandle::release);
        assertThat(again).as("a nested hold onto a handle another thread now owns").isEmpty();
        Background.run(handle::release).get();
        assertThat(LockApp.otherThreadAcquires(locks, "outlive:passed")).isTrue();
    }

    @Test
    void theThreadStillNestsWhileItsOwnCallHoldsTheLock() {
        String inner = locks.withLock("outlive:nested", Duration.ZERO, () -> {
            try (LockHandle nested = locks.acquire("outlive:nested", Duration.ZERO)) {
                return nested.isValid() ? "nested" : "invalid";
            }
        });
        assertThat(inner).isEqualTo("nested");
    }

    @Test
    void aLeaseHandleUsedByAnotherThreadIsNoLongerEnteredEither() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("outlive-lease").mode(Mode.LEASE)
                .table("outlive_lease_lock").start()) {
            LockHandle handle = instance.locks.acquire("outlive:lease", Duration.ZERO);
            Background.run(() -> assertThat(handle.fencingToken()).isPositive()).get();
            Optional<LockHandle> again = instance.locks.tryAcquire("outlive:lease");
            again.ifPresent(LockHandle::release);
            assertThat(again).isEmpty();
            handle.release();
        }
    }

    @Singleton
    public static class Cron {

        final AtomicInteger runs = new AtomicInteger();

        @Locked(value = "outlive:cron", atLeastFor = "10s", onBusy = OnBusy.SKIP)
        public Integer tick() {
            return runs.incrementAndGet();
        }
    }
}
