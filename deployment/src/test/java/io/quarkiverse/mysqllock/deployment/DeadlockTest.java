package io.quarkiverse.mysqllock.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkus.test.QuarkusUnitTest;

/** Two threads, each holding one lock and waiting for the other's: the server breaks the cycle at once. */
class DeadlockTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void theServersDeadlockBecomesLockNotAcquiredAndTheVictimKeepsItsLocks() throws Exception {
        CountDownLatch bothHold = new CountDownLatch(2);
        CountDownLatch victimDone = new CountDownLatch(1);

        CompletableFuture<String> first = Background.supply(() -> {
            try (LockHandle a = locks.acquire("deadlock:a", Duration.ZERO)) {
                bothHold.countDown();
                await(bothHold);
                try (LockHandle b = locks.acquire("deadlock:b", Duration.ofSeconds(20))) {
                    return "acquired";
                } catch (LockNotAcquiredException e) {
                    victimDone.countDown();
                    return e.reason() + " " + a.isValid();
                }
            }
        });
        CompletableFuture<String> second = Background.supply(() -> {
            try (LockHandle b = locks.acquire("deadlock:b", Duration.ZERO)) {
                bothHold.countDown();
                await(bothHold);
                LockApp.await("the first thread to wait for b", Duration.ofSeconds(5), () -> ServerState.waitingInGetLock() > 0);
                try (LockHandle a = locks.acquire("deadlock:a", Duration.ofSeconds(20))) {
                    return "acquired";
                } catch (LockNotAcquiredException e) {
                    victimDone.countDown();
                    return e.reason() + " " + b.isValid() + " " + e.getMessage().contains("deadlock");
                }
            }
        });

        long start = System.nanoTime();
        String a = first.get(30, TimeUnit.SECONDS);
        String b = second.get(30, TimeUnit.SECONDS);
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).isLessThan(10);
        // Exactly one thread was chosen as the victim; it still held its own lock; the other then got the lock.
        assertThat(new String[] { a, b }).containsExactlyInAnyOrder("acquired",
                a.equals("acquired") ? "DEADLOCK true true" : "DEADLOCK true");
        assertThat(ServerState.holder("deadlock:a")).isEmpty();
        assertThat(ServerState.holder("deadlock:b")).isEmpty();
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
