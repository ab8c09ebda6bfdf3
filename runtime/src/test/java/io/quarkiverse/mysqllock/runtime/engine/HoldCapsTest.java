package io.quarkiverse.mysqllock.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockLostException;

/**
 * {@code atMostFor} caps of the engines without a lease of their own: a held lock is ended when its cap comes, on the
 * engine's executor; a cap moved or cancelled before its end runs ends nothing; a lock no longer held gets no cap.
 * <p>
 * The ends the timer hands to the executor are queued here and run by the test, so that what happens between a cap
 * firing and its end running is in the test's hands rather than the timer's.
 */
class HoldCapsTest {

    private static final long PATIENCE_SECONDS = 30;

    /** The ends the timer handed to the executor, not run yet. */
    private final BlockingQueue<Runnable> endings = new LinkedBlockingQueue<>();
    private final List<TestLock> ended = new CopyOnWriteArrayList<>();
    private final HoldCaps<TestLock> caps = new HoldCaps<>("hold-caps-test-", endings::add, ended::add);
    private final TestLock lock = new TestLock("report");

    @AfterEach
    void close() {
        caps.close();
    }

    @Test
    void aHeldLockIsEndedWhenItsCapComesOnTheEnginesExecutor() throws Exception {
        caps.capAt(lock, 0);
        assertThat(lock.capped()).isTrue();

        Runnable ending = endings.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertThat(ending).as("the cap came").isNotNull();
        assertThat(ended).as("not on the timer thread").isEmpty();
        ending.run();
        assertThat(ended).containsExactly(lock);
    }

    @Test
    void aCapMovedAfterItFiredButBeforeItsEndRanEndsNothing() throws Exception {
        caps.capAt(lock, 0);
        Runnable ending = endings.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertThat(ending).isNotNull();

        caps.capAt(lock, TimeUnit.HOURS.toNanos(1)); // extended meanwhile
        ending.run();

        assertThat(ended).isEmpty();
        assertThat(lock.capped()).as("the new cap stands").isTrue();
    }

    @Test
    void aCapCancelledAfterItFiredButBeforeItsEndRanEndsNothing() throws Exception {
        caps.capAt(lock, 0);
        Runnable ending = endings.poll(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertThat(ending).isNotNull();

        lock.cancelCap(); // released meanwhile
        ending.run();

        assertThat(ended).isEmpty();
        assertThat(lock.capped()).isFalse();
    }

    @Test
    void aLockNoLongerHeldGetsNoCapAndLosesTheOneItHad() {
        caps.capAt(lock, TimeUnit.HOURS.toNanos(1));
        assertThat(lock.capped()).isTrue();
        lock.released = true;
        caps.capAt(lock, TimeUnit.HOURS.toNanos(1));
        assertThat(lock.capped()).isFalse();

        TestLock lost = new TestLock("lost");
        lost.lost = new LockLostException("lost", LockLostException.Reason.CONNECTION_LOST, "gone", null);
        caps.capAt(lost, 0);
        assertThat(lost.capped()).isFalse();
    }

    @Test
    void anEndTheExecutorRefusesRunsOnTheTimerThread() throws Exception {
        CompletableFuture<String> endedOn = new CompletableFuture<>();
        HoldCaps<TestLock> refusing = new HoldCaps<>("hold-caps-refused-", work -> {
            throw new RejectedExecutionException("shutting down");
        }, capped -> endedOn.complete(Thread.currentThread().getName()));
        try {
            refusing.capAt(lock, 0);
            assertThat(endedOn.get(PATIENCE_SECONDS, TimeUnit.SECONDS)).as("ended rather than never")
                    .startsWith("hold-caps-refused-");
        } finally {
            refusing.close();
        }
    }

    @Test
    void theMessageNamesTheLock() {
        assertThat(HoldCaps.message(lock, "its session was closed"))
                .isEqualTo("Lock 'report' reached its atMostFor cap while it was held: its session was closed");
    }
}
