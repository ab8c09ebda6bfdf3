package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A loss that only the release finds: the holder's session was killed during an action shorter than the keepalive
 * (10 s here), or another instance force-released a lease. withLock, runOnce and {@code @Locked} methods must throw
 * {@link LockLostException}, as their contracts say, instead of returning as if the action had run exclusively.
 */
class LossFoundAtReleaseTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Guarded.class);

    @Inject
    LockManager locks;

    @Inject
    Guarded guarded;

    static void killHolder(String name) {
        TestDatabase.shared().kill(ServerState.holder(name).orElseThrow());
    }

    @Test
    void withLockThrowsALossItsReleaseFinds() {
        assertThatThrownBy(() -> locks.withLock("atrelease:with", Duration.ZERO, () -> {
            killHolder("atrelease:with");
            return "a result that must not be trusted";
        })).isInstanceOf(LockLostException.class).hasMessageContaining("atrelease:with");

        assertThatThrownBy(() -> locks.withLock("atrelease:runnable", Duration.ZERO,
                () -> killHolder("atrelease:runnable"))).isInstanceOf(LockLostException.class);
    }

    @Test
    void anExceptionOfTheActionWinsAndCarriesTheLossFoundAtRelease() {
        assertThatThrownBy(() -> locks.withLock("atrelease:failing", Duration.ZERO, () -> {
            killHolder("atrelease:failing");
            throw new IllegalArgumentException("the action's own failure");
        })).isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getSuppressed()).hasAtLeastOneElementOfType(LockLostException.class));
    }

    @Test
    void runOnceThrowsALossItsReleaseFindsAndStillRecordsTheCompletion() {
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> locks.runOnce("atrelease:once", () -> {
            runs.incrementAndGet();
            killHolder("atrelease:once");
        })).isInstanceOf(LockLostException.class);
        assertThat(locks.runOnce("atrelease:once", runs::incrementAndGet)).isFalse();
        assertThat(runs).hasValue(1);
    }

    @Test
    void aLockedMethodThrowsALossItsReleaseFinds() {
        assertThatThrownBy(() -> guarded.killOwnHolder()).isInstanceOf(LockLostException.class)
                .hasMessageContaining("atrelease:locked");
        assertThat(guarded.calls).hasValue(1);
    }

    /**
     * With {@code atLeastFor}, the release that ends the method only schedules the lock's give-back: a loss during the
     * method must still reach its caller, or a job that ran beside another instance reports success (the fault suite
     * found it: a session killed inside a 17 ms section of a method kept 30 ms).
     */
    @Test
    void aLockedMethodKeptAtLeastForAWhileThrowsALossFoundWhenItReturns() {
        assertThatThrownBy(() -> guarded.killOwnHolderKeptLonger()).isInstanceOf(LockLostException.class)
                .hasMessageContaining("atrelease:atleast");
        assertThat(guarded.keptCalls).hasValue(1);
    }

    @Test
    void aLeaseTakenAwayDuringWithLockIsThrown() {
        try (StandaloneLocks holder = StandaloneLocks.Settings.of("release-lease").mode(Mode.LEASE)
                .table("release_lease_lock").start();
                StandaloneLocks admin = StandaloneLocks.Settings.of("release-admin").mode(Mode.LEASE)
                        .table("release_lease_lock").start()) {
            assertThatThrownBy(() -> holder.locks.withLock("atrelease:lease", Duration.ZERO, () -> {
                assertThat(admin.locks.forceRelease("atrelease:lease")).isTrue();
                return "a result that must not be trusted";
            })).isInstanceOf(LockLostException.class).hasMessageContaining("atrelease:lease");
        }
    }

    @Singleton
    public static class Guarded {

        final AtomicInteger calls = new AtomicInteger();

        final AtomicInteger keptCalls = new AtomicInteger();

        @Locked(value = "atrelease:atleast", atLeastFor = "10s")
        public String killOwnHolderKeptLonger() {
            keptCalls.incrementAndGet();
            killHolder("atrelease:atleast");
            return "a result that must not be trusted";
        }

        @Locked("atrelease:locked")
        public String killOwnHolder() {
            calls.incrementAndGet();
            killHolder("atrelease:locked");
            return "a result that must not be trusted";
        }
    }
}
