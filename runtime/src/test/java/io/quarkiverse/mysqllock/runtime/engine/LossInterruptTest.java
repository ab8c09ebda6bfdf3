package io.quarkiverse.mysqllock.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockLostException.Reason;
import io.quarkiverse.mysqllock.LockMode;

/**
 * {@code interruptOnLoss}: the loss interrupts the thread that armed it, not the one that found the loss; nothing after
 * the disarm; the worker's own disarm clears the interrupt the loss caused, and only that one.
 */
class LossInterruptTest {

    private static final long PATIENCE_SECONDS = 30;

    private final LossNotifier notifier = new LossNotifier(LockMetrics.NONE, LockMode.LEASE);
    /** Shut down: it calls the listeners on the thread that reports the loss. */
    private final LossNotifier inline = new LossNotifier(LockMetrics.NONE, LockMode.LEASE);
    private final TestLock lock = new TestLock("job");
    private final HoldHandle<TestLock> hold = lock.newHold();

    LossInterruptTest() {
        inline.close();
    }

    @AfterEach
    void cleanUp() {
        Thread.interrupted();
        hold.release();
        notifier.close();
    }

    @Test
    void aWorkerBlockedInAWaitIsInterruptedByTheLossAndGoesBackClean() throws Exception {
        CountDownLatch armed = new CountDownLatch(1);
        CompletableFuture<String> outcome = new CompletableFuture<>();
        Thread worker = new Thread(() -> {
            LossInterrupt interrupt = LossInterrupt.arm(hold);
            armed.countDown();
            String how;
            try {
                how = new CountDownLatch(1).await(PATIENCE_SECONDS, TimeUnit.SECONDS) ? "opened" : "timed out";
            } catch (InterruptedException e) {
                how = "interrupted";
            }
            interrupt.disarm();
            outcome.complete(how + (Thread.currentThread().isInterrupted() ? ", flag left set" : ", clean"));
        }, "loss-interrupt-worker");
        worker.setDaemon(true);
        worker.start();
        assertThat(armed.await(PATIENCE_SECONDS, TimeUnit.SECONDS)).isTrue();

        notifier.lose(lock, Reason.LEASE_EXPIRED, "the lease expired", null);

        assertThat(outcome.get(PATIENCE_SECONDS, TimeUnit.SECONDS)).isEqualTo("interrupted, clean");
        assertThat(Thread.currentThread().isInterrupted()).as("the reporting thread").isFalse();
    }

    @Test
    void theWorkersDisarmClearsTheInterruptTheLossCaused() {
        LossInterrupt interrupt = LossInterrupt.arm(hold);

        inline.lose(lock, Reason.LEASE_EXPIRED, "the lease expired", null); // the listener runs here, on the worker

        assertThat(Thread.currentThread().isInterrupted()).as("interrupted by the loss").isTrue();
        interrupt.disarm();
        assertThat(Thread.currentThread().isInterrupted()).as("a pooled thread goes back clean").isFalse();
    }

    @Test
    void noInterruptAfterTheDisarm() {
        LossInterrupt interrupt = LossInterrupt.arm(hold);
        interrupt.disarm();

        inline.lose(lock, Reason.LEASE_EXPIRED, "the lease expired", null);

        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @Test
    void anInterruptAlreadyPendingIsKeptByTheDisarm() {
        Thread.currentThread().interrupt(); // someone else's
        LossInterrupt interrupt = LossInterrupt.arm(hold);
        inline.lose(lock, Reason.LEASE_EXPIRED, "the lease expired", null);

        interrupt.disarm();

        assertThat(Thread.interrupted()).as("not this one's to clear").isTrue();
    }

    @Test
    void armingOnALockAlreadyLostInterruptsAtOnceAndADisarmByAnotherThreadClearsNothing() throws Exception {
        notifier.lose(lock, Reason.LEASE_EXPIRED, "the lease expired", null);
        CompletableFuture<LossInterrupt> armed = new CompletableFuture<>();
        CompletableFuture<Void> disarmed = new CompletableFuture<>();
        CompletableFuture<Boolean> interruptedAfterwards = new CompletableFuture<>();
        Thread worker = new Thread(() -> {
            armed.complete(LossInterrupt.arm(hold));
            disarmed.join(); // not interruptible: the interrupt stays pending
            interruptedAfterwards.complete(Thread.currentThread().isInterrupted());
        }, "loss-interrupt-worker");
        worker.setDaemon(true);
        worker.start();

        armed.get(PATIENCE_SECONDS, TimeUnit.SECONDS).disarm();
        disarmed.complete(null);

        assertThat(interruptedAfterwards.get(PATIENCE_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(Thread.currentThread().isInterrupted()).as("the disarming thread").isFalse();
    }
}
