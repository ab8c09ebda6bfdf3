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
 * An extension and the end of a lock at its {@code atMostFor} cap are decided in one step (issue 44, item 4). Before,
 * the end checked that its cap had not been moved, and only then, outside the lock's monitor, told the holders: an
 * extension in between moved the cap (NAMED and in-memory {@code extend()} answered true), and the lock was ended a
 * moment later, under a holder just told it was held until its new cap.
 * <p>
 * As in {@code HoldCapsTest}, the ends the timer hands to the executor are queued here and run by the test; the end
 * given to {@link HoldCaps} is an engine's end (told lost, then freed) that waits, once it began, until the test lets
 * it go on: what happens between an end beginning and its holders being told is in the test's hands. The extension is
 * {@link HoldCaps#capAt}, which the engines called to extend before the fix (and which refuses, with it, once the end
 * began), so that this test runs against both.
 */
class HoldCapsRaceTest {

    private static final long PATIENCE_SECONDS = 30;

    /** The ends the timer handed to the executor, not run yet. */
    private final BlockingQueue<Runnable> endings = new LinkedBlockingQueue<>();
    private final List<TestLock> ended = new CopyOnWriteArrayList<>();
    private final CountDownLatch endBegan = new CountDownLatch(1);
    private final CountDownLatch endMayGoOn = new CountDownLatch(1);
    /** An engine's end at the cap: once the test lets it go on, the holders are told, then the lock is freed. */
    private final HoldCaps<TestLock> caps = new HoldCaps<>("hold-caps-race-", endings::add, capped -> {
        endBegan.countDown();
        awaitOrFail(endMayGoOn);
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
    void anExtensionThatComesOnceTheEndAtTheCapBeganSetsNoCapOnALockAboutToEnd() throws Exception {
        caps.capAt(lock, 0);
        Runnable ending = endings.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertThat(ending).as("the cap came").isNotNull();
        Thread ender = new Thread(ending, "hold-caps-race-end");
        ender.start();
        assertThat(endBegan.await(PATIENCE_SECONDS, TimeUnit.SECONDS)).as("the end began: its cap was not moved before")
                .isTrue();

        // The holder extends now. Before the fix this set a new cap, and the engine answered true.
        caps.capAt(lock, TimeUnit.HOURS.toNanos(1));

        endMayGoOn.countDown();
        ender.join(TimeUnit.SECONDS.toMillis(PATIENCE_SECONDS));
        assertThat(ender.isAlive()).as("the end finished").isFalse();

        assertThat(ended).as("the end that began went on").containsExactly(lock);
        assertThat(lock.lost).isNotNull();
        assertThat(lock.lost.reason()).isEqualTo(LockLostException.Reason.LEASE_EXPIRED);
        assertThat(lock.capped())
                .as("a lock ended at its cap holds no cap set after its end began: an extension that set one was told"
                        + " the lock was held until then")
                .isFalse();
    }

    @Test
    void anExtensionBeforeTheEndBeganStillWinsAndTheEndDoesNothing() throws Exception {
        caps.capAt(lock, 0);
        Runnable ending = endings.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertThat(ending).isNotNull();

        caps.capAt(lock, TimeUnit.HOURS.toNanos(1)); // the timer fired, the end has not begun: the extension wins
        endMayGoOn.countDown();
        ending.run();

        assertThat(endBegan.getCount()).as("the end never began").isEqualTo(1);
        assertThat(ended).isEmpty();
        assertThat(lock.lost).isNull();
        assertThat(lock.capped()).as("the new cap stands").isTrue();
    }

    private static void awaitOrFail(CountDownLatch latch) {
        try {
            if (!latch.await(PATIENCE_SECONDS, TimeUnit.SECONDS)) {
                throw new AssertionError("the test never let the end go on");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
