package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkus.test.QuarkusUnitTest;

/** {@link LockHandle#extend}: a job that learns it needs longer moves its lease's end, on the server. */
class ExtendTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    private static StandaloneLocks instance(String id, Mode mode) {
        return StandaloneLocks.Settings.of(id).mode(mode).table("extend_" + mode).start();
    }

    @Test
    void anExtendedLeaseOutlivesItsFirstCapOnTheServer() {
        try (StandaloneLocks a = instance("ext-a", Mode.LEASE); StandaloneLocks b = instance("ext-b", Mode.LEASE)) {
            long start = System.nanoTime();
            LockHandle handle = a.locks.acquire("ext:longer", LockOptions.defaults().holdingAtMost(Duration.ofSeconds(1)));
            long fence = handle.fencingToken();
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            handle.onLost(lost::add);
            assertThat(handle.extend(Duration.ofSeconds(4))).isTrue();
            // past the first cap: still held, on the server and for its holder
            LockApp.await("the first cap to pass", Duration.ofSeconds(10),
                    () -> System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(1800));
            assertThat(b.locks.tryAcquire("ext:longer")).isEmpty();
            assertThat(handle.isValid()).isTrue();
            assertThat(lost).isEmpty();
            // the new cap ends it, unrenewed, and the next holder gets a higher fence
            LockHandle next = b.locks.acquire("ext:longer", LockOptions.waitingUpTo(Duration.ofSeconds(15)));
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(3900);
            assertThat(next.fencingToken()).isGreaterThan(fence);
            LockApp.await("the holder to be told", Duration.ofSeconds(5), () -> !lost.isEmpty());
            assertThat(lost.get(0).reason()).isEqualTo(LockLostException.Reason.LEASE_EXPIRED);
            assertThatThrownBy(() -> handle.extend(Duration.ofSeconds(5))).isInstanceOf(LockLostException.class);
            next.release();
            handle.release();
        }
    }

    @Test
    void anExtensionCanShortenALease() {
        try (StandaloneLocks a = instance("ext-short-a", Mode.LEASE);
                StandaloneLocks b = instance("ext-short-b", Mode.LEASE)) {
            long start = System.nanoTime();
            LockHandle handle = a.locks.acquire("ext:shorter", LockOptions.defaults().holdingAtMost(Duration.ofMinutes(5)));
            long fence = handle.fencingToken();
            assertThat(handle.extend(Duration.ofSeconds(1))).isTrue();
            // within 10 s, not the 5 minutes first asked for
            LockHandle next = b.locks.acquire("ext:shorter", LockOptions.waitingUpTo(Duration.ofSeconds(10)));
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(900);
            assertThat(next.fencingToken()).isGreaterThan(fence);
            LockApp.await("the holder to be told", Duration.ofSeconds(5), () -> !handle.isValid());
            next.release();
            handle.release();
        }
    }

    @Test
    void aLeaseTakenOverCannotBeExtended() {
        try (StandaloneLocks a = instance("ext-over-a", Mode.LEASE); StandaloneLocks b = instance("ext-over-b", Mode.LEASE)) {
            LockHandle handle = a.locks.acquire("ext:over", LockOptions.defaults().holdingAtMost(Duration.ofMinutes(5)));
            assertThat(b.locks.forceRelease("ext:over")).isTrue();
            LockHandle thief = b.locks.acquire("ext:over", LockOptions.waitingUpTo(Duration.ZERO));
            assertThatThrownBy(() -> handle.extend(Duration.ofMinutes(1))).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("ext:over");
            assertThat(handle.isValid()).isFalse();
            assertThat(thief.isValid()).isTrue();
            handle.release();
            assertThat(b.locks.isLocked("ext:over")).as("the release leaves the new holder's lease alone").isTrue();
            thief.release();
        }
    }

    @Test
    void badExtensionsAreRefusedAndChangeNothing() {
        for (Mode mode : new Mode[] { Mode.NAMED, Mode.LEASE }) {
            try (StandaloneLocks a = instance("ext-bad-" + mode, mode)) {
                LockHandle handle = a.locks.acquire("ext:bad", LockOptions.defaults().holdingAtMost(Duration.ofSeconds(30)));
                assertThatThrownBy(() -> handle.extend(null)).isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> handle.extend(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> handle.extend(Duration.ofMillis(100))).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("500ms");
                assertThatThrownBy(() -> handle.extend(Duration.ofDays(365L * 300)))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("at most 36500 days");
                assertThat(handle.isValid()).isTrue();
                handle.release();
                assertThatThrownBy(() -> handle.extend(Duration.ofSeconds(1))).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("released");
                assertThat(a.locks.isLocked("ext:bad")).isFalse();
            }
        }
    }

    @Test
    void locksWithoutALeaseEndHaveNothingToExtend() {
        try (StandaloneLocks named = instance("ext-named", Mode.NAMED);
                StandaloneLocks lease = instance("ext-lease", Mode.LEASE)) {
            for (StandaloneLocks instance : new StandaloneLocks[] { named, lease }) {
                // NAMED: a lock ends with its release or its session; LEASE without a cap: renewed while held
                LockHandle handle = instance.locks.acquire("ext:none");
                assertThat(handle.extend(Duration.ofSeconds(1))).isTrue();
                assertThat(handle.isValid()).isTrue();
                handle.release();
            }
            // several locks at once extend together
            LockHandle all = lease.locks.acquireAll(java.util.List.of("ext:all-1", "ext:all-2"), Duration.ZERO);
            assertThat(all.extend(Duration.ofSeconds(2))).isTrue();
            all.release();
        }
    }
}
