package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Two threads, each holding one lock and waiting for the other's: the cycle is broken at once. Their first locks are
 * granted at once on a shared connection, so this instance finds the cycle among its threads before the second wait.
 */
class DeadlockTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void aDeadlockAmongThisInstancesThreadsIsRefusedBeforeTheWaitAndTheVictimKeepsItsLocks() throws Exception {
        deadlockIsBroken(locks, locks, "this instance detected a deadlock");
    }

    /** Runs the two threads, on two managers; the victim's message must contain {@code detectedBy}. */
    static void deadlockIsBroken(LockManager firstLocks, LockManager secondLocks, String detectedBy) throws Exception {
        CountDownLatch bothHold = new CountDownLatch(2);
        CountDownLatch victimDone = new CountDownLatch(1);

        CompletableFuture<String> first = Background.supply(() -> {
            try (LockHandle a = firstLocks.acquire("deadlock:a", Duration.ZERO)) {
                bothHold.countDown();
                await(bothHold);
                try (LockHandle b = firstLocks.acquire("deadlock:b", Duration.ofSeconds(20))) {
                    return "acquired";
                } catch (LockNotAcquiredException e) {
                    victimDone.countDown();
                    return e.reason() + " " + a.isValid() + " " + e.getMessage().contains(detectedBy);
                }
            }
        });
        CompletableFuture<String> second = Background.supply(() -> {
            try (LockHandle b = secondLocks.acquire("deadlock:b", Duration.ZERO)) {
                bothHold.countDown();
                await(bothHold);
                LockApp.await("the first thread to wait for b", Duration.ofSeconds(15),
                        () -> ServerState.waitingInGetLock() > 0);
                try (LockHandle a = secondLocks.acquire("deadlock:a", Duration.ofSeconds(20))) {
                    return "acquired";
                } catch (LockNotAcquiredException e) {
                    victimDone.countDown();
                    return e.reason() + " " + b.isValid() + " " + e.getMessage().contains(detectedBy);
                }
            }
        });

        long start = System.nanoTime();
        String a = first.get(30, TimeUnit.SECONDS);
        String b = second.get(30, TimeUnit.SECONDS);
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).isLessThan(10);
        // Exactly one thread was chosen as the victim; it still held its own lock; the other then got the lock.
        assertThat(new String[] { a, b }).containsExactlyInAnyOrder("acquired", "DEADLOCK true true");
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
