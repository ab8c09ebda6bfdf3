package io.quarkiverse.mysqllock.deployment.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.shedlock.MySqlLockProvider;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * The ShedLock provider keeps the contract ShedLock documents for its providers, on both engines, between two instances
 * of the application (two lock managers with engines of their own, as two processes have): no second lock while one is
 * held (the same thread included), {@code lockAtMostFor} ends a lock never unlocked, {@code lockAtLeastFor} keeps it
 * after unlock, {@code extend}, and threads of both instances incrementing one counter under the lock lose no update.
 */
class ShedLockProviderTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(SharedCounter.class);

    /** Two instances on one lock table, each with its provider. */
    private record Pair(StandaloneLocks a, StandaloneLocks b, MySqlLockProvider first, MySqlLockProvider second)
            implements
                AutoCloseable {

        static Pair of(Mode mode, String id) {
            StandaloneLocks a = StandaloneLocks.Settings.of(id + "-a").mode(mode).table("shed_lock").start();
            StandaloneLocks b = StandaloneLocks.Settings.of(id + "-b").mode(mode).table("shed_lock").start();
            return new Pair(a, b, new MySqlLockProvider(a.locks), new MySqlLockProvider(b.locks));
        }

        @Override
        public void close() {
            first.close();
            second.close();
            a.close();
            b.close();
        }
    }

    private static LockConfiguration config(String name, Duration atMostFor, Duration atLeastFor) {
        return new LockConfiguration(ClockProvider.now(), name, atMostFor, atLeastFor);
    }

    /** Waits until {@code provider} can take the name (then gives it back). */
    private static void awaitFree(MySqlLockProvider provider, String name, String what) {
        LockApp.await(what, Duration.ofSeconds(10), () -> {
            Optional<SimpleLock> taken = provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
            taken.ifPresent(SimpleLock::unlock);
            return taken.isPresent();
        });
    }

    @Test
    void namedNoSecondLockWhileOneIsHeldNotEvenOnTheSameThread() throws Exception {
        noSecondLockWhileOneIsHeldNotEvenOnTheSameThread(Mode.NAMED);
    }

    @Test
    void leaseNoSecondLockWhileOneIsHeldNotEvenOnTheSameThread() throws Exception {
        noSecondLockWhileOneIsHeldNotEvenOnTheSameThread(Mode.LEASE);
    }

    private void noSecondLockWhileOneIsHeldNotEvenOnTheSameThread(Mode mode) throws Exception {
        try (Pair pair = Pair.of(mode, "shed-held-" + mode)) {
            LockConfiguration config = config("shed:held", Duration.ofSeconds(30), Duration.ZERO);
            SimpleLock lock = pair.first.lock(config).orElseThrow();
            assertThat(pair.first.lock(config)).as("the same thread").isEmpty();
            assertThat(Background.supply(() -> pair.first.lock(config)).get(10, TimeUnit.SECONDS)).as("another thread")
                    .isEmpty();
            assertThat(pair.second.lock(config)).as("another instance").isEmpty();
            lock.unlock();
            assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
            SimpleLock again = pair.second.lock(config).orElseThrow();
            again.unlock();
        }
    }

    @Test
    void namedLockAtMostForEndsALockNeverUnlocked() {
        lockAtMostForEndsALockNeverUnlocked(Mode.NAMED);
    }

    @Test
    void leaseLockAtMostForEndsALockNeverUnlocked() {
        lockAtMostForEndsALockNeverUnlocked(Mode.LEASE);
    }

    private void lockAtMostForEndsALockNeverUnlocked(Mode mode) {
        try (Pair pair = Pair.of(mode, "shed-most-" + mode)) {
            long start = System.nanoTime();
            assertThat(pair.first.lock(config("shed:most", Duration.ofSeconds(1), Duration.ZERO))).isPresent();
            assertThat(pair.second.lock(config("shed:most", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
            awaitFree(pair.second, "shed:most", "the lock to end at its lockAtMostFor");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(900);
        }
    }

    @Test
    void namedLockAtMostForOfAMillenniumHoldsUntilUnlocked() {
        lockAtMostForOfAMillenniumHoldsUntilUnlocked(Mode.NAMED);
    }

    @Test
    void leaseLockAtMostForOfAMillenniumHoldsUntilUnlocked() {
        lockAtMostForOfAMillenniumHoldsUntilUnlocked(Mode.LEASE);
    }

    /** ShedLock accepts any lockAtMostFor: one beyond a century is held as a century ("for ever"), never leaked. */
    private void lockAtMostForOfAMillenniumHoldsUntilUnlocked(Mode mode) {
        try (Pair pair = Pair.of(mode, "shed-millennium-" + mode)) {
            Duration millennium = Duration.ofDays(365L * 1000);
            SimpleLock lock = pair.first.lock(config("shed:millennium", millennium, Duration.ZERO)).orElseThrow();
            assertThat(pair.second.lock(config("shed:millennium", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
            assertThat(lock.extend(millennium, Duration.ZERO)).isPresent().get()
                    .satisfies(SimpleLock::unlock);
            awaitFree(pair.second, "shed:millennium", "the lock to be given back by unlock");
        }
    }

    @Test
    void namedLockAtLeastForKeepsTheLockAfterUnlock() {
        lockAtLeastForKeepsTheLockAfterUnlock(Mode.NAMED);
    }

    @Test
    void leaseLockAtLeastForKeepsTheLockAfterUnlock() {
        lockAtLeastForKeepsTheLockAfterUnlock(Mode.LEASE);
    }

    private void lockAtLeastForKeepsTheLockAfterUnlock(Mode mode) {
        try (Pair pair = Pair.of(mode, "shed-least-" + mode)) {
            long start = System.nanoTime();
            pair.first.lock(config("shed:least", Duration.ofSeconds(30), Duration.ofMillis(1500))).orElseThrow().unlock();
            assertThat(pair.second.lock(config("shed:least", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
            assertThat(pair.first.lock(config("shed:least", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
            awaitFree(pair.second, "shed:least", "the lock to end at its lockAtLeastFor");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(1500);
        }
    }

    @Test
    void extendMovesTheEndOfANamedLock() throws Exception {
        extendMovesTheEndOfTheLock(Mode.NAMED);
    }

    /** On LEASE the lease itself moves: a holder that dies after extending keeps others out until the new end. */
    @Test
    void extendMovesTheEndOfALease() throws Exception {
        extendMovesTheEndOfTheLock(Mode.LEASE);
    }

    private void extendMovesTheEndOfTheLock(Mode mode) {
        try (Pair pair = Pair.of(mode, "shed-extend-" + mode)) {
            SimpleLock lock = pair.first.lock(config("shed:extend", Duration.ofSeconds(1), Duration.ZERO)).orElseThrow();
            SimpleLock extended = lock.extend(Duration.ofSeconds(3), Duration.ZERO).orElseThrow();
            assertThatThrownBy(lock::unlock).as("the extended lock replaces it").isInstanceOf(IllegalStateException.class);
            long extendedAt = System.nanoTime();
            // past the first lockAtMostFor the lock is still held
            LockApp.await("the first lockAtMostFor to pass", Duration.ofSeconds(10),
                    () -> System.nanoTime() - extendedAt > TimeUnit.MILLISECONDS.toNanos(1500));
            assertThat(pair.second.lock(config("shed:extend", Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
            // and the new lockAtMostFor ends it, though it is never unlocked
            awaitFree(pair.second, "shed:extend", "the new lockAtMostFor to end it");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - extendedAt)).isGreaterThanOrEqualTo(2900);
            extended.unlock(); // ended already at its lockAtMostFor: unlocking it too is harmless
        }
    }

    /** ShedLock's own check: threads and instances incrementing one counter under the lock lose no update. */
    @Test
    void namedThreadsOfTwoInstancesIncrementingOneCounterLoseNoUpdate() throws Exception {
        threadsOfTwoInstancesIncrementingOneCounterLoseNoUpdate(Mode.NAMED);
    }

    @Test
    void leaseThreadsOfTwoInstancesIncrementingOneCounterLoseNoUpdate() throws Exception {
        threadsOfTwoInstancesIncrementingOneCounterLoseNoUpdate(Mode.LEASE);
    }

    private void threadsOfTwoInstancesIncrementingOneCounterLoseNoUpdate(Mode mode) throws Exception {
        String counter = "counter-" + mode;
        SharedCounter.reset(counter);
        try (Pair pair = Pair.of(mode, "shed-counter-" + mode)) {
            AtomicInteger increments = new AtomicInteger();
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                MySqlLockProvider provider = t % 2 == 0 ? pair.first : pair.second;
                threads.add(Background.run(
                        () -> SharedCounter.incrementUnderLock(provider, "shed:counter-" + mode, counter, 40, increments)));
            }
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(180, TimeUnit.SECONDS);
            assertThat(increments.get()).isEqualTo(320);
            assertThat(SharedCounter.value(counter)).isEqualTo(320);
        }
    }
}
