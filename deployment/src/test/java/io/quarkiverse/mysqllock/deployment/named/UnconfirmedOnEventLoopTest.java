package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandleDecorator;
import io.quarkiverse.mysqllock.runtime.engine.GrantedLock;
import io.quarkiverse.mysqllock.runtime.engine.HoldHandle;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * {@code isValid()} on an event-loop thread gives a final answer for a NAMED lock whose membership is unconfirmed (issue
 * 44, item 5). Before, the event loop answered false and left the loss to a worker, which made it only if the
 * membership was still unconfirmed when it ran: a renewal that landed in between left the lock held and valid, under a
 * holder just told it was not (and {@code isValid()} turned true again). Now the answer false is the loss itself: the
 * lock is marked lost on the event loop, and the worker only frees it.
 * <p>
 * As in {@code ToldLostMeansFreedTest}, the engine's periodic work is stopped, so that the membership runs out
 * unconfirmed and nothing but {@code isValid()} looks at it. The "event loop" is a thread of the test's that the
 * {@link IOThreadDetector} names as one. While it asks, it holds the lock's monitor, which every marking of a loss takes
 * ({@code GrantedLock.markLost}): the worker the event loop hands the lock to cannot mark it lost before the event loop
 * has checked what its own answer meant, so what is checked is that answer, not a race with the worker.
 */
class UnconfirmedOnEventLoopTest {

    private static volatile Thread eventLoop;

    @BeforeAll
    static void oneEventLoopThread() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[] { () -> Thread.currentThread() == eventLoop });
    }

    @AfterAll
    static void noEventLoopThread() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void falseOnAnEventLoopIsALossAlreadyAndTheLockIsFreed() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("unconfirmed-loop").mode(Mode.NAMED)
                .keepalive(Duration.ofMillis(300)).ttl(Duration.ofSeconds(1)).start()) {
            String name = "unconfirmed:on-the-loop";
            String serverName = instance.locks.serverName(name);
            LockHandle held = instance.locks.acquire(name, Duration.ZERO);
            ControlledHandle own = ControlledHandleDecorator.innermost((ControlledHandle) held);
            assertThat(own).as("the engine's own hold: its lock's monitor is reachable").isInstanceOf(HoldHandle.class);
            GrantedLock lock = HoldHandle.lockOf(own, GrantedLock.class);
            AtomicReference<LockLostException> told = new AtomicReference<>();
            held.onLost(told::set);
            assertThat(ServerState.holder(serverName)).isPresent();

            instance.locks.engine().periodicWork().shutdownNow();

            CompletableFuture<LockLostException> toldAtOnce = new CompletableFuture<>();
            CompletableFuture<Boolean> askedAgain = new CompletableFuture<>();
            Thread loop = new Thread(() -> {
                try {
                    synchronized (lock) {
                        Await.until("the membership to run out unconfirmed", Duration.ofSeconds(10),
                                () -> !held.isValid());
                        // A lock already lost calls a listener registered now at once, on this thread (LockHandle.onLost).
                        AtomicReference<LockLostException> now = new AtomicReference<>();
                        held.onLost(now::set);
                        toldAtOnce.complete(now.get());
                        askedAgain.complete(held.isValid());
                    }
                } catch (Throwable e) {
                    toldAtOnce.completeExceptionally(e);
                    askedAgain.completeExceptionally(e);
                }
            }, "test-event-loop");
            eventLoop = loop;
            loop.start();

            LockLostException lost = toldAtOnce.get(30, TimeUnit.SECONDS);
            assertThat(lost).as("isValid() answered false on the event loop: the lock was lost by then").isNotNull();
            assertThat(lost.reason()).isEqualTo(LockLostException.Reason.MEMBERSHIP_LOST);
            assertThat(askedAgain.get(30, TimeUnit.SECONDS)).as("and stays invalid").isFalse();
            loop.join(TimeUnit.SECONDS.toMillis(30));

            Await.until("the listener told", Duration.ofSeconds(10), () -> told.get() != null);
            assertThat(told.get().reason()).isEqualTo(LockLostException.Reason.MEMBERSHIP_LOST);
            Await.until("the lock freed on the server", Duration.ofSeconds(10),
                    () -> ServerState.holder(serverName).isEmpty());
            assertThat(held.isValid()).isFalse();
            held.release();
        } finally {
            eventLoop = null;
        }
    }
}
