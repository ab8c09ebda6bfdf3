package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;
import io.smallrye.mutiny.subscription.Cancellable;

/**
 * An {@code acquireAsync} cancelled while it waits leaves the instance's queue for the name: the waiter behind it is
 * next, and the cancelled one is never granted the lock. Before, its worker went on waiting in its place until it was
 * granted the lock, and only then gave it back.
 */
class CancelledWaiterTest {

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void aCancelledWaiterIsNeverGrantedTheLock() throws Exception {
        AtomicInteger grants = new AtomicInteger();
        LockMetrics counting = new LockMetrics() {
            @Override
            public void acquisition(LockMode engine, Outcome outcome, long waitNanos) {
                if (outcome == Outcome.ACQUIRED) {
                    grants.incrementAndGet();
                }
            }
        };
        try (StandaloneLocks holder = StandaloneLocks.Settings.of("cancel-holder").mode(Mode.NAMED).start();
                StandaloneLocks waiters = StandaloneLocks.Settings.of("cancel-waiters").mode(Mode.NAMED)
                        .metrics(counting).start()) {
            String name = "cancelled-waiter:x";
            LockHandle held = holder.locks.acquire(name, Duration.ZERO);

            CompletableFuture<LockHandle> first = new CompletableFuture<>();
            waiters.locks.acquireAsync(name, Duration.ofSeconds(30)).subscribe().with(first::complete,
                    first::completeExceptionally);
            Await.until("the first waiter waiting on the server", Duration.ofSeconds(10),
                    () -> ServerState.waitingInGetLock() == 1);
            Cancellable cancelled = waiters.locks.acquireAsync(name, Duration.ofSeconds(30)).subscribe().with(h -> {
            });
            cancelled.cancel();
            CompletableFuture<Optional<LockHandle>> third = Background
                    .supply(() -> waiters.locks.tryAcquire(name, Duration.ofSeconds(30)));

            held.release();
            first.get(20, TimeUnit.SECONDS).release();
            third.get(20, TimeUnit.SECONDS).orElseThrow().release();
            assertThat(grants.get()).as("grants: the first waiter and the third, not the cancelled one").isEqualTo(2);
        }
    }
}
