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

    /**
     * Hand-off measured from the moment release() returns: the waiter holds it within 50 ms, in the best of three tries
     * (each on a name of its own, {@code name-1} and on). A waiter woken late by the product (a poll in whole seconds, a
     * missed wake-up) is late every time; a busy machine rarely delays three hand-offs in a row.
     */
    public static void waiterWakesPromptly(LockManager locks, String name) throws Exception {
        waiterWakesPromptly(locks, name, true);
    }

    /** @param onServer whether the waiter waits inside GET_LOCK (NAMED) rather than in this JVM (LEASE) */
    public static void waiterWakesPromptly(LockManager locks, String name, boolean onServer) throws Exception {
        long handOffMillis = LockApp.bestOf3(50, attempt -> handOffMillis(locks, name + "-" + attempt, onServer));
        assertThat(handOffMillis).as("the best of three hand-offs, in ms").isLessThan(50);
    }

    private static long handOffMillis(LockManager locks, String name, boolean onServer) throws Exception {
        LockHandle holder = locks.acquire(name, Duration.ZERO);
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Long> acquiredAt = Background.supply(() -> {
            waiting.countDown();
            LockHandle handle = locks.acquire(name, Duration.ofSeconds(10));
            long at = System.nanoTime();
            handle.release();
            return at;
        });
        assertThat(waiting.await(30, TimeUnit.SECONDS)).isTrue();
        // Give the waiter time to be inside GET_LOCK: if it is not yet, it takes the free lock at once anyway.
        if (onServer) {
            LockApp.await("the waiter to wait on the server", Duration.ofSeconds(30),
                    () -> ServerState.waitingInGetLock() > 0);
        }
        holder.release();
        long releasedAt = System.nanoTime();
        return TimeUnit.NANOSECONDS.toMillis(acquiredAt.get(10, TimeUnit.SECONDS) - releasedAt);
    }

    /**
     * A wait for a held lock ends with BUSY, neither rounded down (MySQL truncates to whole seconds) nor up to the next
     * second. Not rounded down, every time; not rounded up, in the best of three tries (each on a name of its own,
     * {@code name-1} and on): a wait rounded up overshoots every time, a busy machine rarely three times in a row (a
     * 300 ms wait was seen to end after 603 ms, beside a benchmark run).
     */
    public static void timesOutCloseTo(LockManager locks, String name, Duration wait) throws Exception {
        long bound = wait.plusMillis(600).toMillis();
        long elapsed = LockApp.bestOf3(bound, attempt -> timedOutAfterMillis(locks, name + "-" + attempt, wait));
        assertThat(elapsed).as("the best of three waits, in ms").isLessThan(bound);
    }

    /** How long a wait of {@code wait} for the held lock lasted, in ms, checked not to be shorter. */
    private static long timedOutAfterMillis(LockManager locks, String name, Duration wait) throws Exception {
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
            assertThat(Duration.ofNanos(elapsed[0])).isGreaterThanOrEqualTo(wait);
            assertThat(busy.waited()).isGreaterThanOrEqualTo(wait);
            assertThatThrownBy(() -> Background.supply(() -> locks.tryAcquire(name, wait)).get()
                    .orElseThrow()).isInstanceOf(java.util.NoSuchElementException.class);
            return TimeUnit.NANOSECONDS.toMillis(elapsed[0]);
        }
    }
}
