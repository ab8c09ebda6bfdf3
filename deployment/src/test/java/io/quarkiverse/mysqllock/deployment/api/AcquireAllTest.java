package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/** acquireAll: several locks as one, all or none, in one global order, released together. */
class AcquireAllTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void allAreHeldAndReleasedTogether() {
        LockHandle all = locks.acquireAll(List.of("all:c", "all:a", "all:b", "all:a"), Duration.ZERO);
        assertThat(all.parts()).extracting(LockHandle::name).containsExactly("all:a", "all:b", "all:c");
        assertThat(all.name()).isEqualTo("[all:a, all:b, all:c]");
        assertThat(locks.held()).extracting(LockInfo::name).contains("all:a", "all:b", "all:c");
        assertThat(all.parts().stream().mapToLong(LockHandle::fencingToken)).allMatch(token -> token > 0);
        assertThatThrownBy(all::fencingToken).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("parts()");
        assertThat(all.isValid()).isTrue();
        all.release();
        assertThat(all.isValid()).isFalse();
        assertThat(locks.held()).extracting(LockInfo::name).doesNotContain("all:a", "all:b", "all:c");
    }

    @Test
    void oneBusyLockLeavesNoneHeld() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        CompletableFuture<Void> holder = Background.run(() -> {
            try (LockHandle busy = locks.acquire("all:y", Duration.ZERO)) {
                held.countDown();
                if (!done.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the holder go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> locks.acquireAll(List.of("all:x", "all:y", "all:z"), Duration.ofMillis(300)))
                .isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("none is held")
                .hasMessageContaining("all:y")
                .satisfies(e -> assertThat(((LockNotAcquiredException) e).reason())
                        .isEqualTo(LockNotAcquiredException.Reason.BUSY));
        assertThat(LockApp.otherThreadAcquires(locks, "all:x")).as("given back").isTrue();
        assertThat(LockApp.otherThreadAcquires(locks, "all:z")).as("never taken").isTrue();
        done.countDown();
        holder.get(10, TimeUnit.SECONDS);
    }

    @Test
    void badNamesAreRefusedBeforeAnythingIsTaken() {
        assertThatThrownBy(() -> locks.acquireAll(null, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.acquireAll(List.of(), Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one");
        assertThatThrownBy(() -> locks.acquireAll(Arrays.asList("all:ok", null), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.acquireAll(List.of("all:ok", " "), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.acquireAll(List.of("all:ok"), null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(locks.held()).extracting(LockInfo::name).doesNotContain("all:ok");
    }

    /**
     * Threads of two instances asking for overlapping sets in opposite orders: without one global order they would wait
     * for each other in a cycle (the server's deadlock detection would refuse one, or both would wait out their wait).
     */
    @Test
    void namedOppositeOrdersNeverDeadlock() throws Exception {
        oppositeOrdersNeverDeadlock(Mode.NAMED);
    }

    @Test
    void leaseOppositeOrdersNeverDeadlock() throws Exception {
        oppositeOrdersNeverDeadlock(Mode.LEASE);
    }

    private void oppositeOrdersNeverDeadlock(Mode mode) throws Exception {
        try (StandaloneLocks a = StandaloneLocks.Settings.of("all-" + mode + "-a").mode(mode).table("all_lock").start();
                StandaloneLocks b = StandaloneLocks.Settings.of("all-" + mode + "-b").mode(mode).table("all_lock").start()) {
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            AtomicInteger rounds = new AtomicInteger();
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                LockManager manager = t % 2 == 0 ? a.locks : b.locks;
                List<String> names = t < 2 ? List.of("all:p", "all:q", "all:r") : List.of("all:r", "all:q", "all:p");
                threads.add(Background.run(() -> {
                    for (int i = 0; i < 25; i++) {
                        try (LockHandle all = manager.acquireAll(names, Duration.ofSeconds(30))) {
                            if (inside.incrementAndGet() > 1) {
                                overlaps.incrementAndGet();
                            }
                            inside.decrementAndGet();
                            rounds.incrementAndGet();
                        }
                    }
                }));
            }
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            assertThat(rounds.get()).isEqualTo(100);
            assertThat(overlaps.get()).isZero();
        }
    }

    @Test
    void theLossOfOneIsReportedOnce() {
        try (StandaloneLocks a = StandaloneLocks.Settings.of("all-loss-a").mode(Mode.LEASE).table("all_loss_lock").start();
                StandaloneLocks b = StandaloneLocks.Settings.of("all-loss-b").mode(Mode.LEASE).table("all_loss_lock").start()) {
            LockHandle all = a.locks.acquireAll(List.of("all:l1", "all:l2"), Duration.ZERO);
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            all.onLost(lost::add);
            assertThat(b.locks.forceRelease("all:l2")).isTrue();
            LockApp.await("the loss to be reported", Duration.ofSeconds(10), () -> !lost.isEmpty());
            assertThat(all.isValid()).isFalse();
            all.release();
            assertThat(lost).hasSize(1);
            assertThat(lost.get(0).lockName()).isEqualTo("all:l2");
        }
    }
}
