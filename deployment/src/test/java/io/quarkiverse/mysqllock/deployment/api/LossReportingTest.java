package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Losses the fault suite found unreported: a lock the server dropped between two keepalives and found gone only by
 * the release, and a lease whose renewal hung on a stalled network (the holder was told only after the stall, long
 * after another instance had taken the lease over).
 */
class LossReportingTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void aNamedLockDroppedBetweenKeepalivesIsReportedByTheRelease() throws Exception {
        // keepalive 10 s: the release, not the keepalive, finds the loss
        try (StandaloneLocks instance = new StandaloneLocks("release-finds", Mode.NAMED)) {
            LockHandle handle = instance.locks.acquire("found:at-release", Duration.ZERO);
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            handle.onLost(lost::add);

            TestDatabase.shared().kill(ServerState.holder("found:at-release").orElseThrow());
            handle.release();

            LockApp.await("the loss found by the release to be reported", Duration.ofSeconds(30), () -> !lost.isEmpty());
            assertThat(lost).hasSize(1);
            assertThat(lost.get(0).reason()).isIn(LockLostException.Reason.CONNECTION_LOST,
                    LockLostException.Reason.NOT_HELD);
            assertThat(lost.get(0).getMessage()).contains("before it was released");
        }
    }

    /**
     * A nested hold released before the lock is lost no longer hears of it: its listener leaves with it (before, every
     * nested hold's listeners stayed on the lock until it ended, and were all told).
     */
    @Test
    void aReleasedNestedHoldIsNotToldOfALaterLoss() throws Exception {
        try (StandaloneLocks instance = new StandaloneLocks("nested-released", Mode.NAMED)) {
            LockHandle outer = instance.locks.acquire("found:nested", Duration.ZERO);
            java.util.concurrent.atomic.AtomicInteger nestedTold = new java.util.concurrent.atomic.AtomicInteger();
            for (int i = 0; i < 100; i++) {
                LockHandle nested = instance.locks.acquire("found:nested", Duration.ZERO);
                nested.onLost(lost -> nestedTold.incrementAndGet());
                nested.release();
            }
            java.util.concurrent.CompletableFuture<LockLostException> outerTold = new java.util.concurrent.CompletableFuture<>();
            outer.onLost(outerTold::complete);
            TestDatabase.shared().kill(ServerState.holder("found:nested").orElseThrow());
            outer.release(); // finds the loss
            assertThat(outerTold.get(10, java.util.concurrent.TimeUnit.SECONDS)).isNotNull();
            assertThat(nestedTold.get()).as("listeners of nested holds released before the loss").isZero();
        }
    }

    @Test
    void aNamedLockReleasedNormallyReportsNothing() throws Exception {
        try (StandaloneLocks instance = new StandaloneLocks("release-clean", Mode.NAMED)) {
            LockHandle handle = instance.locks.acquire("found:clean", Duration.ZERO);
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            handle.onLost(lost::add);
            handle.release();
            // a second acquisition and release proves the listener thread had its chance to run
            instance.locks.acquire("found:clean", Duration.ZERO).release();
            assertThat(lost).isEmpty();
        }
    }

    /** The lease's expiry is the subject: a short ttl of its own, which the taker's 10 s wait outlasts. */
    @Test
    void aLeaseHolderOnAStalledNetworkIsToldBeforeAnotherInstanceTakesOver() throws Exception {
        TestDatabase db = TestDatabase.shared();
        Duration ttl = Duration.ofSeconds(2);
        try (TcpProxy proxy = TcpProxy.start("stalled-holder", db.port());
                StandaloneLocks stalled = StandaloneLocks.Settings.of("stalled").on(db.via(proxy)).mode(Mode.LEASE)
                        .table("stalled_lease_lock").ttl(ttl).start();
                StandaloneLocks other = StandaloneLocks.Settings.of("other").mode(Mode.LEASE).table("stalled_lease_lock")
                        .ttl(ttl).start()) {
            LockHandle handle = stalled.locks.acquire("stall:lease", Duration.ZERO);
            AtomicLong toldAt = new AtomicLong();
            handle.onLost(e -> toldAt.compareAndSet(0, System.nanoTime()));

            proxy.stall(); // the renewal now hangs: no error, no answer
            long takeOver;
            boolean validDuringStall;
            try {
                CompletableFuture<Long> takenOverAt = Background.supply(() -> {
                    LockHandle taken = other.locks.acquire("stall:lease", Duration.ofSeconds(10));
                    long at = System.nanoTime();
                    taken.release();
                    return at;
                });
                takeOver = takenOverAt.get(15, TimeUnit.SECONDS);
                validDuringStall = handle.isValid();
            } finally {
                proxy.resume(); // else closing the stalled instance would hang on its connections
            }

            assertThat(toldAt.get()).as("the stalled holder was told").isPositive();
            assertThat(toldAt.get()).as("told before the take-over").isLessThan(takeOver);
            assertThat(validDuringStall).isFalse();
            handle.release();
        }
    }
}
