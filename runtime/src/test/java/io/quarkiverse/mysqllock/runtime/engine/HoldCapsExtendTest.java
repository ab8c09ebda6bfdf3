package io.quarkiverse.mysqllock.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockLostException;

/**
 * {@link HoldCaps#extend}, the step the NAMED and in-memory engines' {@code extend()} take (issue 44, item 4): true only
 * for a lock that is held and, if capped, now ends at the new cap; false, moving nothing, once the end at the cap began
 * or the lock is no longer held, whichever way the extension and the end interleave. Needs the fix (the method is new).
 */
class HoldCapsExtendTest {

    private static final long PATIENCE_SECONDS = 30;

    private final BlockingQueue<Runnable> endings = new LinkedBlockingQueue<>();
    private final List<TestLock> ended = new CopyOnWriteArrayList<>();
    private final CountDownLatch endBegan = new CountDownLatch(1);
    private final CountDownLatch endMayGoOn = new CountDownLatch(1);
    private final HoldCaps<TestLock> caps = new HoldCaps<>("hold-caps-extend-", endings::add, capped -> {
        endBegan.countDown();
        try {
            endMayGoOn.await(PATIENCE_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (capped.lost == null) {
            capped.lost = new LockLostException(capped.name, LockLostException.Reason.LEASE_EXPIRED,
                    HoldCaps.message(capped, "the test's engine ends it"), null);
        }
        ended.add(capped);
    });
    private final TestLock lock = new TestLock("report");

    @AfterEach
    void close() {
        endMayGoOn.countDown();
        caps.close();
    }

    @Test
    void anUncappedHeldLockIsExtendedAndStaysUncapped() {
        assertThat(caps.extend(lock, TimeUnit.HOURS.toNanos(1))).isTrue();
        assertThat(lock.capped()).isFalse();
    }

    @Test
    void aCappedLockIsExtendedUntilItsEndBegins() throws Exception {
        caps.capAt(lock, TimeUnit.HOURS.toNanos(1));
        assertThat(caps.extend(lock, TimeUnit.HOURS.toNanos(2))).isTrue();
        assertThat(lock.capped()).isTrue();
    }

    @Test
    void theEndBeganFirst() throws Exception {
        caps.capAt(lock, 0);
        Runnable ending = endings.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertThat(ending).isNotNull();
        Thread ender = new Thread(ending, "hold-caps-extend-end");
        ender.start();
        assertThat(endBegan.await(PATIENCE_SECONDS, TimeUnit.SECONDS)).isTrue();

        assertThat(caps.extend(lock, TimeUnit.HOURS.toNanos(1))).as("refused: the lock is about to end").isFalse();
        assertThat(lock.lost).as("not told yet: the engine tells it before it throws").isNull();

        endMayGoOn.countDown();
        ender.join(TimeUnit.SECONDS.toMillis(PATIENCE_SECONDS));
        assertThat(ended).containsExactly(lock);
        assertThat(HoldCaps.notExtended(lock)).isInstanceOfSatisfying(LockLostException.class,
                e -> assertThat(e.reason()).isEqualTo(LockLostException.Reason.LEASE_EXPIRED));
    }

    @Test
    void theExtensionCheckedTheLockThenTheWholeEndRanBeforeItMovedTheCap() throws Exception {
        // the order a handle's extend() could see before the fix: its own check passed, then the end ran to its last step
        caps.capAt(lock, 0);
        Runnable ending = endings.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertThat(ending).isNotNull();
        endMayGoOn.countDown();
        ending.run();
        assertThat(ended).containsExactly(lock);

        assertThat(caps.extend(lock, TimeUnit.HOURS.toNanos(1))).isFalse();
        assertThat(HoldCaps.notExtended(lock)).isInstanceOf(LockLostException.class)
                .hasMessage("Lock 'report' is lost: it cannot be extended");
    }

    @Test
    void theExtensionCameFirstAndTheEndDoesNothing() throws Exception {
        caps.capAt(lock, 0);
        Runnable ending = endings.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertThat(ending).isNotNull();

        assertThat(caps.extend(lock, TimeUnit.HOURS.toNanos(1))).isTrue();
        endMayGoOn.countDown();
        ending.run();

        assertThat(ended).isEmpty();
        assertThat(lock.isHeld()).isTrue();
        assertThat(lock.capped()).isTrue();
    }

    @Test
    void aReleasedLockIsNotExtended() {
        caps.capAt(lock, TimeUnit.HOURS.toNanos(1));
        lock.released = true;
        assertThat(caps.extend(lock, TimeUnit.HOURS.toNanos(1))).isFalse();
        assertThat(HoldCaps.notExtended(lock)).isInstanceOf(IllegalStateException.class)
                .hasMessage("Lock 'report' was released: it cannot be extended");
    }
}
