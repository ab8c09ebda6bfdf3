package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

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

/**
 * {@link LockOptions#holdingAtMost}: a hung but live holder never keeps a lock for ever, whichever engine AUTO chose.
 * LEASE lets its lease expire; NAMED has no lease, so its holder's process releases the lock at the cap.
 */
class HoldCapTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    private static StandaloneLocks instance(String id, Mode mode) {
        return StandaloneLocks.Settings.of(id).mode(mode).table("cap_" + mode).start();
    }

    @Test
    void aCapEndsAHoldThatIsNeverReleasedOnEveryEngine() {
        for (Mode mode : new Mode[] { Mode.NAMED, Mode.LEASE }) {
            try (StandaloneLocks a = instance("cap-a-" + mode, mode); StandaloneLocks b = instance("cap-b-" + mode, mode)) {
                long start = System.nanoTime();
                LockHandle hung = a.locks.acquire("cap:hung", LockOptions.defaults().holdingAtMost(Duration.ofSeconds(1)));
                long fence = hung.fencingToken();
                CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
                hung.onLost(lost::add);
                LockHandle next = b.locks.acquire("cap:hung", LockOptions.waitingUpTo(Duration.ofSeconds(20)));
                // invalid for its old holder before anyone else could be granted it
                assertThat(hung.isValid()).as(mode.name()).isFalse();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as(mode.name())
                        .isGreaterThanOrEqualTo(900);
                assertThat(next.fencingToken()).isGreaterThan(fence);
                LockApp.await("the holder to be told", Duration.ofSeconds(10), () -> !lost.isEmpty());
                assertThat(lost).singleElement().satisfies(e -> {
                    assertThat(e.reason()).isEqualTo(LockLostException.Reason.LEASE_EXPIRED);
                    assertThat(e.getMessage()).contains("cap:hung", "atMostFor");
                });
                assertThat(hung.isValid()).isFalse();
                // the late release of the capped hold leaves the next holder's lock alone
                hung.release();
                assertThat(next.isValid()).isTrue();
                assertThat(a.locks.isLocked("cap:hung")).isTrue();
                next.release();
                assertThat(a.locks.isLocked("cap:hung")).isFalse();
            }
        }
    }

    @Test
    void anExtensionMovesTheCapOfANamedLock() {
        try (StandaloneLocks a = instance("cap-ext-a", Mode.NAMED); StandaloneLocks b = instance("cap-ext-b", Mode.NAMED)) {
            long start = System.nanoTime();
            LockHandle handle = a.locks.acquire("cap:ext", LockOptions.defaults().holdingAtMost(Duration.ofSeconds(1)));
            assertThat(handle.extend(Duration.ofSeconds(4))).isTrue();
            LockApp.await("the first cap to pass", Duration.ofSeconds(10),
                    () -> System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(1800));
            assertThat(b.locks.tryAcquire("cap:ext")).isEmpty();
            assertThat(handle.isValid()).isTrue();
            LockHandle next = b.locks.acquire("cap:ext", LockOptions.waitingUpTo(Duration.ofSeconds(20)));
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(3900);
            LockApp.await("the holder to be told", Duration.ofSeconds(10), () -> !handle.isValid());
            next.release();
            handle.release();
        }
    }

    @Test
    void aReleasedHoldIsNotEndedAgainByItsCap() {
        try (StandaloneLocks a = instance("cap-rel-a", Mode.NAMED); StandaloneLocks b = instance("cap-rel-b", Mode.NAMED)) {
            LockHandle first = a.locks.acquire("cap:rel", LockOptions.defaults().holdingAtMost(Duration.ofSeconds(1)));
            first.release();
            long start = System.nanoTime();
            // the same instance takes the name again, uncapped: the first hold's cap must not end this one
            LockHandle second = a.locks.acquire("cap:rel");
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            second.onLost(lost::add);
            LockApp.await("the first cap's time to pass", Duration.ofSeconds(10),
                    () -> System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(1500));
            assertThat(second.isValid()).isTrue();
            assertThat(lost).isEmpty();
            assertThat(b.locks.tryAcquire("cap:rel")).isEmpty();
            second.release();
        }
    }
}
