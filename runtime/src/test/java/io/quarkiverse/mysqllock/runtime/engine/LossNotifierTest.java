package io.quarkiverse.mysqllock.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockLostException.Reason;
import io.quarkiverse.mysqllock.LockMode;

/**
 * Loss reporting: the first report of a loss marks the lock lost and is told to each listener once, on a thread of the
 * notifier (on the reporting thread once it is shut down); later reports, and reports about a lock already released,
 * are not; a failing or slow listener keeps no other from hearing. Concurrent reports of one loss are
 * {@code LossNotifierRaceTest}'s (deployment module).
 */
class LossNotifierTest {

    private static final long PATIENCE_SECONDS = 30;

    private final RecordingMetrics metrics = new RecordingMetrics();
    private final LossNotifier notifier = new LossNotifier(metrics, LockMode.NAMED);
    /** Shut down: it tells each listener on the reporting thread, before the report returns. */
    private final LossNotifier inline = new LossNotifier(metrics, LockMode.NAMED);
    private final TestLock lock = new TestLock("orders");
    private final HoldHandle<TestLock> hold = lock.newHold();

    LossNotifierTest() {
        inline.close();
    }

    @AfterEach
    void close() {
        hold.release();
        notifier.close();
    }

    @Test
    void eachListenerIsToldOnANotifierThreadOfTheLossAsReported() throws Exception {
        CompletableFuture<LockLostException> first = new CompletableFuture<>();
        CompletableFuture<String> firstThread = new CompletableFuture<>();
        CompletableFuture<LockLostException> second = new CompletableFuture<>();
        hold.onLost(lost -> {
            firstThread.complete(Thread.currentThread().getName());
            first.complete(lost);
        });
        hold.onLost(second::complete);
        SQLException cause = new SQLException("Communications link failure", "08S01");

        notifier.lose(lock, Reason.CONNECTION_LOST, "Lock 'orders' was lost: its session ended", cause);

        LockLostException lost = first.get(PATIENCE_SECONDS, TimeUnit.SECONDS);
        assertThat(lost).isSameAs(lock.lost).hasMessage("Lock 'orders' was lost: its session ended");
        assertThat(lost.getCause()).isSameAs(cause);
        assertThat(lost.lockName()).isEqualTo("orders");
        assertThat(lost.reason()).isEqualTo(Reason.CONNECTION_LOST);
        assertThat(second.get(PATIENCE_SECONDS, TimeUnit.SECONDS)).isSameAs(lost);
        assertThat(firstThread.get(PATIENCE_SECONDS, TimeUnit.SECONDS)).startsWith("mysql-lock-lost-");
        assertThat(lock.isHeld()).isFalse();
        assertThat(hold.isValid()).isFalse();
        assertThat(metrics.lost).containsExactly("NAMED CONNECTION_LOST");
    }

    @Test
    void onlyTheFirstReportOfALossCounts() {
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        hold.onLost(told::add);

        inline.lose(lock, Reason.LEASE_EXPIRED, "first", null);
        inline.lose(lock, Reason.CONNECTION_LOST, "second", null);
        inline.loseAtRelease(lock, Reason.NOT_HELD, "third", null);

        assertThat(told).hasSize(1);
        assertThat(told.get(0)).isSameAs(lock.lost).hasMessage("first");
        assertThat(lock.lost.reason()).isEqualTo(Reason.LEASE_EXPIRED);
        assertThat(metrics.lost).as("counted once").containsExactly("NAMED LEASE_EXPIRED");
    }

    @Test
    void aLockReleasedBeforeItsLossIsNotReportedUnlessItsReleaseFoundTheLoss() {
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        hold.onLost(told::add);
        lock.released = true;

        inline.lose(lock, Reason.CONNECTION_LOST, "found after the release", null);
        assertThat(lock.lost).isNull();
        assertThat(told).isEmpty();
        assertThat(metrics.lost).isEmpty();

        // whatever ran under the lock may not have been exclusive: its holders hear it although it was just released
        inline.loseAtRelease(lock, Reason.NOT_HELD, "found by the release", null);
        assertThat(told).extracting(LockLostException::getMessage).containsExactly("found by the release");
        assertThat(metrics.lost).containsExactly("NAMED NOT_HELD");
    }

    @Test
    void aListenerThatFailsKeepsNoOtherFromHearing() {
        List<String> told = new CopyOnWriteArrayList<>();
        hold.onLost(lost -> {
            throw new IllegalStateException("a failing listener");
        });
        hold.onLost(lost -> {
            throw new AssertionError("an Error, too");
        });
        hold.onLost(lost -> told.add(lost.getMessage()));

        assertThatCode(() -> inline.lose(lock, Reason.CONNECTION_LOST, "gone", null)).doesNotThrowAnyException();
        assertThat(told).containsExactly("gone");
    }

    @Test
    void aSlowListenerDelaysNeitherTheReportNorTheOtherListeners() throws Exception {
        CountDownLatch slowEntered = new CountDownLatch(1);
        CountDownLatch slowMayEnd = new CountDownLatch(1);
        AtomicBoolean slowEnded = new AtomicBoolean();
        CountDownLatch fastTold = new CountDownLatch(1);
        hold.onLost(lost -> {
            slowEntered.countDown();
            try {
                slowMayEnd.await(PATIENCE_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            slowEnded.set(true);
        });
        hold.onLost(lost -> fastTold.countDown());
        try {
            notifier.lose(lock, Reason.CONNECTION_LOST, "gone", null);
            assertThat(slowEnded.get()).as("the report waited for the slow listener").isFalse();
            assertThat(slowEntered.await(PATIENCE_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(fastTold.await(PATIENCE_SECONDS, TimeUnit.SECONDS)).as("told while the slow one still runs")
                    .isTrue();
            assertThat(slowEnded.get()).isFalse();
        } finally {
            slowMayEnd.countDown();
        }
    }

    @Test
    void aReleasedHoldHearsOfNoLaterLossWhileTheHoldItNestedInDoes() {
        List<String> told = new CopyOnWriteArrayList<>();
        HoldHandle<TestLock> nested = lock.newHold();
        hold.onLost(lost -> told.add("outer"));
        nested.onLost(lost -> told.add("nested"));
        nested.release();

        inline.lose(lock, Reason.CONNECTION_LOST, "gone", null);

        assertThat(told).containsExactly("outer");
    }

    @Test
    void aListenerAddedAfterTheLossIsToldAtOnceOnTheThreadThatAddsIt() {
        inline.lose(lock, Reason.SHUTDOWN, "the application stops", null);
        List<String> told = new CopyOnWriteArrayList<>();

        hold.onLost(lost -> told.add(Thread.currentThread().getName() + ": " + lost.reason()));

        assertThat(told).containsExactly(Thread.currentThread().getName() + ": SHUTDOWN");
        assertThatThrownBy(() -> hold.onLost(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("onLost listener must not be null");
    }

    /** Counts the losses reported as metrics, as "engine reason". */
    private static final class RecordingMetrics implements LockMetrics {
        final List<String> lost = new CopyOnWriteArrayList<>();

        @Override
        public void lost(LockMode engine, Reason cause) {
            lost.add(engine + " " + cause);
        }
    }
}
