package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/** What {@code @Locked(waitFor, atLeastFor, atMostFor)} does for a method, a programmatic caller asks with LockOptions. */
class LockOptionsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void badOptionsAreRefusedBeforeAnythingIsAsked() {
        assertThatThrownBy(() -> locks.acquire("opt:bad", (LockOptions) null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LockOptions.defaults()");
        assertThatThrownBy(() -> LockOptions.waitingUpTo(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("wait");
        assertThatThrownBy(() -> LockOptions.waitingUpTo(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockOptions.defaults().holdingAtMost(Duration.ofMillis(100)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("500ms");
        // a lease's end must fit its row and its length a monotonic clock: a century is the most
        assertThat(LockOptions.defaults().holdingAtMost(LockOptions.MAX_AT_MOST_FOR).atMostFor()).hasDays(36_500);
        assertThatThrownBy(() -> LockOptions.defaults().holdingAtMost(LockOptions.MAX_AT_MOST_FOR.plusNanos(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 36500 days");
        assertThatThrownBy(() -> LockOptions.defaults().holdingAtMost(java.time.temporal.ChronoUnit.FOREVER.getDuration()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 36500 days");
        assertThatThrownBy(() -> LockOptions.defaults().holdingAtLeast(LockOptions.MAX_AT_MOST_FOR.plusNanos(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atLeastFor")
                .hasMessageContaining("at most 36500 days");
        assertThatThrownBy(() -> LockOptions.defaults().holdingAtMost(Duration.ofSeconds(2))
                .holdingAtLeast(Duration.ofSeconds(3))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("atLeastFor").hasMessageContaining("atMostFor");
        assertThatThrownBy(() -> LockOptions.defaults().holdingAtLeast(Duration.ofSeconds(3))
                .holdingAtMost(Duration.ofSeconds(2))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.acquire(" ", LockOptions.defaults())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.tryAcquire("opt:bad", (LockOptions) null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(locks.held()).noneMatch(info -> info.name().startsWith("opt:bad"));
    }

    /**
     * The keep ends on the product's clock: checks that find the lock free after 1.5 s may have come after it ended,
     * prove nothing, and are made again on a lock of their own.
     */
    @Test
    void aHoldIsKeptAtLeastAsLongAsAsked() throws Exception {
        LockApp.conclusively("the kept lock checked while the keep lasts", attempt -> {
            String name = "opt:least-" + attempt;
            long start = System.nanoTime();
            LockHandle handle = locks.acquire(name, LockOptions.waitingUpTo(Duration.ZERO)
                    .holdingAtLeast(Duration.ofMillis(1500)));
            handle.release();
            assertThat(handle.isValid()).as("released for its caller").isFalse();
            boolean locked = locks.isLocked(name);
            // the lock kept is not the caller's: the same thread contends for it
            Optional<LockHandle> sameThread = locks.tryAcquire(name);
            sameThread.ifPresent(LockHandle::release);
            Optional<LockHandle> otherThread = Background.supply(() -> locks.tryAcquire(name)).get(10, TimeUnit.SECONDS);
            otherThread.ifPresent(LockHandle::release);
            if (!(locked && sameThread.isEmpty() && otherThread.isEmpty()) && LockApp.millisSince(start) >= 1500) {
                return false;
            }
            assertThat(locked).as("kept until atLeastFor").isTrue();
            assertThat(sameThread).as("the same thread").isEmpty();
            assertThat(otherThread).as("another thread").isEmpty();
            LockApp.await("the kept lock to be given back", Duration.ofSeconds(30), () -> !locks.isLocked(name));
            assertThat(LockApp.millisSince(start)).isGreaterThanOrEqualTo(1500);
            locks.acquire(name, LockOptions.waitingUpTo(Duration.ZERO)).release();
            return true;
        });
    }

    @Test
    void aHoldReleasedAfterItsMinimumEndsAtOnce() {
        LockHandle handle = locks.acquire("opt:least-past", LockOptions.waitingUpTo(Duration.ZERO)
                .holdingAtLeast(Duration.ofMillis(1)));
        long acquired = System.nanoTime();
        LockApp.await("the minimum to pass", Duration.ofSeconds(30),
                () -> System.nanoTime() - acquired > TimeUnit.MILLISECONDS.toNanos(2));
        handle.release();
        assertThat(locks.isLocked("opt:least-past")).isFalse();
    }

    @Test
    void tryAcquireWithOptionsAnswersEmptyWhenBusy() throws Exception {
        try (LockHandle held = locks.acquire("opt:busy", LockOptions.defaults())) {
            Optional<LockHandle> other = Background
                    .supply(() -> locks.tryAcquire("opt:busy", LockOptions.waitingUpTo(Duration.ofMillis(200))))
                    .get(10, TimeUnit.SECONDS);
            assertThat(other).isEmpty();
            assertThatThrownBy(() -> Background
                    .supply(() -> locks.acquire("opt:busy", LockOptions.waitingUpTo(Duration.ZERO)))
                    .get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockNotAcquiredException.class);
            assertThat(held.isValid()).isTrue();
        }
    }

    /** The 1 s keep ends on the product's clock: a check after it may have ended is made again, as above. */
    @Test
    void acquireAsyncKeepsTheMinimumToo() throws Exception {
        LockApp.conclusively("the kept lock checked while the keep lasts", attempt -> {
            String name = "opt:async-" + attempt;
            long start = System.nanoTime();
            LockHandle handle = locks.acquireAsync(name, LockOptions.waitingUpTo(Duration.ZERO)
                    .holdingAtLeast(Duration.ofSeconds(1))).await().atMost(Duration.ofSeconds(10));
            handle.release();
            boolean locked = locks.isLocked(name);
            if (!locked && LockApp.millisSince(start) >= 1000) {
                return false;
            }
            assertThat(locked).as("kept until atLeastFor").isTrue();
            assertThatThrownBy(handle::fencingToken).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("released");
            LockApp.await("the kept lock to be given back", Duration.ofSeconds(30), () -> !locks.isLocked(name));
            return true;
        });
    }

    /**
     * The 1 s cap ends on the product's clock: a check that finds the lease free after it may have ended proves
     * nothing, and is made again on a lease of its own. A ttl far from the cap (10 s) tells a lease ended at its cap
     * from one ended at its ttl, with room for a busy machine; one never ended fails the other instance's wait.
     */
    @Test
    void aLeaseCappedWithAtMostForEndsEvenIfNeverReleased() throws Exception {
        try (StandaloneLocks a = StandaloneLocks.Settings.of("opt-most-a").mode(Mode.LEASE).table("opt_lock")
                .ttl(Duration.ofSeconds(10)).start();
                StandaloneLocks b = StandaloneLocks.Settings.of("opt-most-b").mode(Mode.LEASE).table("opt_lock")
                        .ttl(Duration.ofSeconds(10)).start()) {
            LockApp.conclusively("the capped lease checked held before its cap", attempt -> {
                String name = "opt:most-" + attempt;
                long start = System.nanoTime();
                LockHandle handle = a.locks.acquire(name, LockOptions.defaults().holdingAtMost(Duration.ofSeconds(1)));
                long fence = handle.fencingToken();
                CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
                handle.onLost(lost::add);
                Optional<LockHandle> early = b.locks.tryAcquire(name);
                early.ifPresent(LockHandle::release);
                if (early.isPresent() && LockApp.millisSince(start) >= 1000) {
                    handle.release();
                    return false;
                }
                assertThat(early).as("taken before its cap").isEmpty();
                LockHandle next = b.locks.acquire(name, LockOptions.waitingUpTo(Duration.ofSeconds(30)));
                assertThat(LockApp.millisSince(start)).as("ended at its 1 s cap, not at the 10 s ttl")
                        .isBetween(900L, 8000L);
                assertThat(next.fencingToken()).isGreaterThan(fence);
                LockApp.await("the holder to be told", Duration.ofSeconds(30), () -> !lost.isEmpty());
                assertThat(lost.get(0).reason()).isEqualTo(LockLostException.Reason.LEASE_EXPIRED);
                next.release();
                handle.release();
                return true;
            });
        }
    }
}
