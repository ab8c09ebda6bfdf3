package io.quarkiverse.mysqllock.deployment.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/** Semaphores: at most N holders across instances, a permit per holder with its own token, a crashed permit back. */
class SemaphoreTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void permitsCanBeTakenWithoutBlockingAndACancelledWaitKeepsNone() throws Exception {
        Duration deadline = Duration.ofSeconds(20);
        DistributedSemaphore exports = locks.semaphore("sem:async", 2);
        LockHandle one = exports.acquireAsync(Duration.ZERO).await().atMost(deadline);
        LockHandle other = exports.acquireAsync(1, Duration.ZERO).await().atMost(deadline);
        assertThatThrownBy(() -> exports.acquireAsync(Duration.ofMillis(200)).await().atMost(deadline))
                .isInstanceOf(LockNotAcquiredException.class);
        // a waiting subscription cancelled before a permit is free: the permit freed later is not kept for it
        CompletableFuture<LockHandle> never = new CompletableFuture<>();
        var waiting = exports.acquireAsync(Duration.ofSeconds(30)).subscribe().with(never::complete,
                never::completeExceptionally);
        waiting.cancel();
        one.release();
        other.release();
        LockApp.await("both permits to be free", deadline, () -> exports.availablePermits() == 2);
        try (LockHandle both = exports.acquireAsync(2, Duration.ofSeconds(10)).await().atMost(deadline)) {
            assertThat(both.parts()).hasSize(2);
        }
        assertThat(never).isNotDone();
        // more permits than the fleet's number: refused when the number is read, off the caller's thread
        assertThatThrownBy(() -> exports.acquireAsync(3, Duration.ZERO).await().atMost(deadline))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has 2 permits");
        assertThatThrownBy(() -> exports.acquireAsync(0, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void severalPermitsAreTakenAllOrNone() throws Exception {
        for (Mode mode : new Mode[] { Mode.NAMED, Mode.LEASE }) {
            try (StandaloneLocks a = instance("sem-n-" + mode + "-a", mode);
                    StandaloneLocks b = instance("sem-n-" + mode + "-b", mode)) {
                String name = "sem-n:" + mode;
                DistributedSemaphore onA = a.locks.semaphore(name, 4);
                DistributedSemaphore onB = b.locks.semaphore(name, 4);
                LockHandle three = onA.acquire(3, Duration.ZERO);
                assertThat(three.parts()).hasSize(3);
                assertThat(three.parts()).extracting(LockHandle::fencingToken).allMatch(token -> token > 0);
                assertThat(onB.availablePermits()).isEqualTo(1);
                assertThat(onB.tryAcquire(2, Duration.ofMillis(300))).as("only one permit is free").isEmpty();
                assertThat(onB.availablePermits()).as("the refused caller kept none").isEqualTo(1);
                try (LockHandle one = onB.acquire(1, Duration.ZERO)) {
                    assertThat(one.isValid()).isTrue();
                }
                // a caller waiting for two gets them once the three are given back
                CompletableFuture<LockHandle> two = Background.supply(() -> onB.acquire(2, Duration.ofSeconds(20)));
                three.release();
                try (LockHandle both = two.get(30, TimeUnit.SECONDS)) {
                    assertThat(both.parts()).hasSize(2);
                    assertThat(onA.availablePermits()).isEqualTo(2);
                }
                assertThatThrownBy(() -> onA.acquire(5, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("has 4 permits");
                assertThatThrownBy(() -> onA.acquire(0, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
            }
        }
    }

    @Test
    void namedAdmitsAtMostItsPermits() throws Exception {
        admitsAtMostItsPermits(Mode.NAMED);
    }

    @Test
    void leaseAdmitsAtMostItsPermits() throws Exception {
        admitsAtMostItsPermits(Mode.LEASE);
    }

    private void admitsAtMostItsPermits(Mode mode) throws Exception {
        try (StandaloneLocks a = instance("sem-" + mode + "-a", mode);
                StandaloneLocks b = instance("sem-" + mode + "-b", mode)) {
            String name = "sem:" + mode;
            DistributedSemaphore onA = a.locks.semaphore(name, 3);
            DistributedSemaphore onB = b.locks.semaphore(name, 3);
            assertThat(onA.availablePermits()).isEqualTo(3);
            LockHandle first = onA.acquire(Duration.ZERO);
            LockHandle second = onA.acquire(Duration.ZERO); // the same thread: another permit, not a nested hold
            LockHandle third = onB.acquire(Duration.ZERO);
            Set<String> permits = new HashSet<>(List.of(first.name(), second.name(), third.name()));
            assertThat(permits).hasSize(3).allMatch(permit -> permit.startsWith(name + "#permit-"));
            assertThat(onB.availablePermits()).isZero();
            assertThat(onA.tryAcquire(Duration.ZERO)).isEmpty();
            assertThat(onB.tryAcquire(Duration.ofMillis(300))).isEmpty();
            assertThatThrownBy(() -> onB.acquire(Duration.ZERO)).isInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("all 3 permits of semaphore '" + name + "' are held")
                    .satisfies(e -> assertThat(((LockNotAcquiredException) e).reason())
                            .isEqualTo(LockNotAcquiredException.Reason.BUSY));

            long token = second.fencingToken();
            String freed = second.name();
            second.release();
            LockHandle next = onB.acquire(Duration.ZERO);
            assertThat(next.name()).isEqualTo(freed);
            assertThat(next.fencingToken()).as("the permit's token increases from holder to holder").isGreaterThan(token);
            List.of(first, third, next).forEach(LockHandle::release);
            assertThat(onA.availablePermits()).isEqualTo(3);
        }
    }

    @Test
    void namedHoldersNeverExceedThePermits() throws Exception {
        holdersNeverExceedThePermits(Mode.NAMED);
    }

    @Test
    void leaseHoldersNeverExceedThePermits() throws Exception {
        holdersNeverExceedThePermits(Mode.LEASE);
    }

    /** Six threads of two instances, 15 rounds each, on two permits: never more than two inside, no round lost. */
    private void holdersNeverExceedThePermits(Mode mode) throws Exception {
        try (StandaloneLocks a = instance("semc-" + mode + "-a", mode);
                StandaloneLocks b = instance("semc-" + mode + "-b", mode)) {
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger most = new AtomicInteger();
            AtomicInteger rounds = new AtomicInteger();
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                DistributedSemaphore semaphore = (t % 2 == 0 ? a : b).locks.semaphore("semc:" + mode, 2);
                threads.add(Background.run(() -> {
                    for (int i = 0; i < 15; i++) {
                        try (LockHandle permit = semaphore.acquire(Duration.ofSeconds(30))) {
                            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            Thread.onSpinWait();
                            inside.decrementAndGet();
                            rounds.incrementAndGet();
                        }
                    }
                }));
            }
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            assertThat(rounds.get()).isEqualTo(90);
            assertThat(most.get()).isBetween(1, 2);
        }
    }

    @Test
    void aWaiterGetsAPermitAsSoonAsOneIsGivenBack() throws Exception {
        DistributedSemaphore semaphore = locks.semaphore("sem:wake", 2);
        LockHandle one = semaphore.acquire(Duration.ZERO);
        LockHandle two = semaphore.acquire(Duration.ZERO);
        CompletableFuture<LockHandle> waiter = Background.supply(() -> semaphore.acquire(Duration.ofSeconds(20)));
        LockApp.await("the waiter to wait", Duration.ofSeconds(30), () -> !waiter.isDone());
        long releasedAt = System.nanoTime();
        one.release();
        LockHandle granted = waiter.get(20, TimeUnit.SECONDS);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasedAt);
        // within the waiter's pauses between rounds (500 ms at most) and what a busy machine adds: never its 20 s wait
        assertThat(millis).as("hand-off within the longest pause between rounds").isLessThan(5000);
        granted.release();
        two.release();
    }

    @Test
    void aKilledHoldersPermitComesBack() throws Exception {
        try (StandaloneLocks a = StandaloneLocks.Settings.of("sem-kill").mode(Mode.NAMED)
                .keepalive(Duration.ofMillis(500)).start()) {
            LockHandle permit = a.locks.semaphore("sem:kill", 1).acquire(Duration.ZERO);
            List<LockLostException> lost = new java.util.concurrent.CopyOnWriteArrayList<>();
            permit.onLost(lost::add);
            assertThat(locks.semaphore("sem:kill", 1).tryAcquire(Duration.ZERO)).isEmpty();
            TestDatabase.shared().kill(ServerState.holder(permit.name()).orElseThrow());
            Optional<LockHandle> back = locks.semaphore("sem:kill", 1).tryAcquire(Duration.ofSeconds(30));
            assertThat(back).isPresent();
            LockApp.await("the holder to be told", Duration.ofSeconds(30), () -> !lost.isEmpty());
            back.get().release();
        }
    }

    @Test
    void anExpiredLeasePermitComesBack() {
        try (StandaloneLocks a = instance("sem-expire-a", Mode.LEASE);
                StandaloneLocks b = instance("sem-expire-b", Mode.LEASE)) {
            LockHandle permit = a.locks.semaphore("sem:expire", 1).acquire(Duration.ZERO);
            List<LockLostException> lost = new java.util.concurrent.CopyOnWriteArrayList<>();
            permit.onLost(lost::add);
            assertThat(b.locks.forceRelease(permit.name())).isTrue();
            LockHandle back = b.locks.semaphore("sem:expire", 1).acquire(Duration.ofSeconds(30));
            LockApp.await("the holder to be told", Duration.ofSeconds(30), () -> !lost.isEmpty());
            assertThat(lost.get(0).reason()).isEqualTo(LockLostException.Reason.NOT_HELD);
            back.release();
        }
    }

    /**
     * The permit count is the fleet's, stored in the lock table by the first instance that used the semaphore: another
     * instance asking for more permits gets no more holders (before, it used more permits and the largest count won), and
     * a deliberate change reaches every instance's next acquisition.
     */
    @Test
    void thePermitCountIsStoredOnceForTheFleetAndChangedDeliberately() throws Exception {
        for (Mode mode : new Mode[] { Mode.NAMED, Mode.LEASE }) {
            try (StandaloneLocks a = instance("sem-count-" + mode + "-a", mode);
                    StandaloneLocks b = instance("sem-count-" + mode + "-b", mode)) {
                String name = "sem-count:" + mode;
                DistributedSemaphore onA = a.locks.semaphore(name, 2);
                DistributedSemaphore onB = b.locks.semaphore(name, 5);
                LockHandle first = onA.acquire(Duration.ZERO);
                assertThat(onB.permits()).as("the count stored by the first user").isEqualTo(2);
                LockHandle second = onB.acquire(Duration.ZERO);
                assertThat(onB.tryAcquire(Duration.ZERO)).as("no third holder, whatever B asked for").isEmpty();
                assertThatThrownBy(() -> onB.acquire(3, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("has 2 permits");

                onB.changePermits(3);
                assertThat(onA.permits()).isEqualTo(3);
                LockHandle third = onA.acquire(Duration.ZERO);
                assertThat(onB.tryAcquire(Duration.ZERO)).isEmpty();
                assertThat(b.locks.semaphore(name, 1).permits()).as("a new object of the name too").isEqualTo(3);
                // the number's row is reserved: no lock's row is it, whatever the lock is called
                a.locks.acquire("~permits:" + name, Duration.ZERO).release();
                a.locks.acquire("permits@" + name, Duration.ZERO).release();
                assertThat(onB.permits()).isEqualTo(3);

                // fewer: a permit held above the new number stays held (and valid) until it is released
                onA.changePermits(1);
                assertThat(List.of(first, second, third)).allMatch(LockHandle::isValid);
                third.release();
                second.release();
                first.release();
                try (LockHandle only = onB.acquire(Duration.ZERO)) {
                    assertThat(onA.tryAcquire(Duration.ZERO)).isEmpty();
                }
                assertThatThrownBy(() -> onA.changePermits(0)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("between 1 and 1024 permits, not 0");
            }
        }
    }

    @Test
    void badArgumentsAreRefusedAndHoldNothing() {
        assertThatThrownBy(() -> locks.semaphore("sem:bad", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 1 and 1024 permits, not 0");
        assertThatThrownBy(() -> locks.semaphore("sem:bad", 1025)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.semaphore(null, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.semaphore(" ", 2)).isInstanceOf(IllegalArgumentException.class);
        DistributedSemaphore semaphore = locks.semaphore("sem:bad", 2);
        assertThatThrownBy(() -> semaphore.acquire(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> semaphore.tryAcquire(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("zero or positive");
        assertThat(locks.held()).extracting(LockInfo::name).noneMatch(held -> held.startsWith("sem:bad"));
    }

    private static StandaloneLocks instance(String id, Mode mode) {
        return StandaloneLocks.Settings.of(id).mode(mode).table("coordination_" + mode.name().toLowerCase()).start();
    }
}
