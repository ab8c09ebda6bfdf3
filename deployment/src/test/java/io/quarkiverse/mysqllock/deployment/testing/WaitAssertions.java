package io.quarkiverse.mysqllock.deployment.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.test.Background;

/** The waiting checks, shared by the MariaDB and MySQL semantics tests. */
public final class WaitAssertions {

    private WaitAssertions() {
    }

    /** Hand-off measured from the moment release() returns: the waiter holds it within 50 ms. */
    public static void waiterWakesPromptly(LockManager locks, String name) throws Exception {
        waiterWakesPromptly(locks, name, true);
    }

    /** @param onServer whether the waiter waits inside GET_LOCK (NAMED) rather than in this JVM (LEASE) */
    public static void waiterWakesPromptly(LockManager locks, String name, boolean onServer) throws Exception {
        LockHandle holder = locks.acquire(name, Duration.ZERO);
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Long> acquiredAt = Background.supply(() -> {
            waiting.countDown();
            LockHandle handle = locks.acquire(name, Duration.ofSeconds(10));
            long at = System.nanoTime();
            handle.release();
            return at;
        });
        assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
        // Give the waiter time to be inside GET_LOCK: if it is not yet, it takes the free lock at once anyway.
        if (onServer) {
            LockApp.await("the waiter to wait on the server", Duration.ofSeconds(5),
                    () -> ServerState.waitingInGetLock() > 0);
        }
        holder.release();
        long releasedAt = System.nanoTime();
        long handOffMillis = TimeUnit.NANOSECONDS.toMillis(acquiredAt.get(10, TimeUnit.SECONDS) - releasedAt);
        assertThat(handOffMillis).isLessThan(50);
    }

    public static void timesOutCloseTo(LockManager locks, String name, Duration wait) throws Exception {
        try (LockHandle holder = locks.acquire(name, Duration.ZERO)) {
            long[] elapsed = new long[1];
            LockNotAcquiredException busy = Background.supply(() -> {
                long start = System.nanoTime();
                try {
                    locks.acquire(name, wait);
                    throw new AssertionError("acquired a held lock");
                } catch (LockNotAcquiredException e) {
                    elapsed[0] = System.nanoTime() - start;
                    return e;
                }
            }).get(wait.toSeconds() + 10, TimeUnit.SECONDS);
            assertThat(busy.reason()).isEqualTo(LockNotAcquiredException.Reason.BUSY);
            // Not rounded down (MySQL truncates to whole seconds) nor up to the next second; the slack is for a
            // loaded machine, where a 300 ms wait was seen to end after 603 ms (beside a benchmark run)
            assertThat(Duration.ofNanos(elapsed[0])).isBetween(wait, wait.plusMillis(600));
            assertThat(busy.waited()).isGreaterThanOrEqualTo(wait);
            assertThatThrownBy(() -> Background.supply(() -> locks.tryAcquire(name, wait)).get()
                    .orElseThrow()).isInstanceOf(java.util.NoSuchElementException.class);
        }
    }
}
