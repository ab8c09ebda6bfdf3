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
        LockApp.await(what, Duration.ofSeconds(30), () -> {
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
    void namedLockAtMostForEndsALockNeverUnlocked() throws Exception {
        lockAtMostForEndsALockNeverUnlocked(Mode.NAMED);
    }

    @Test
    void leaseLockAtMostForEndsALockNeverUnlocked() throws Exception {
        lockAtMostForEndsALockNeverUnlocked(Mode.LEASE);
    }

    /**
     * The 1 s lockAtMostFor ends on the product's clock: a second lock granted after it may have ended proves nothing,
     * and the check is made again on a name of its own.
     */
    private void lockAtMostForEndsALockNeverUnlocked(Mode mode) throws Exception {
        try (Pair pair = Pair.of(mode, "shed-most-" + mode)) {
            LockApp.conclusively("the second lock refused before the lockAtMostFor", attempt -> {
                String name = "shed:most-" + attempt;
                long start = System.nanoTime();
                assertThat(pair.first.lock(config(name, Duration.ofSeconds(1), Duration.ZERO))).isPresent();
                Optional<SimpleLock> second = pair.second.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
                second.ifPresent(SimpleLock::unlock);
                if (second.isPresent() && LockApp.millisSince(start) >= 1000) {
                    return false;
                }
                assertThat(second).as("a second lock while the first holds").isEmpty();
                awaitFree(pair.second, name, "the lock to end at its lockAtMostFor");
                assertThat(LockApp.millisSince(start)).isGreaterThanOrEqualTo(900);
                return true;
            });
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
    void namedLockAtLeastForKeepsTheLockAfterUnlock() throws Exception {
        lockAtLeastForKeepsTheLockAfterUnlock(Mode.NAMED);
    }

    @Test
    void leaseLockAtLeastForKeepsTheLockAfterUnlock() throws Exception {
        lockAtLeastForKeepsTheLockAfterUnlock(Mode.LEASE);
    }

    /**
     * The 1.5 s lockAtLeastFor ends on the product's clock: locks granted after it may have ended prove nothing, and
     * the checks are made again on a name of their own.
     */
    private void lockAtLeastForKeepsTheLockAfterUnlock(Mode mode) throws Exception {
        try (Pair pair = Pair.of(mode, "shed-least-" + mode)) {
            LockApp.conclusively("the kept lock checked before its lockAtLeastFor", attempt -> {
                String name = "shed:least-" + attempt;
                long start = System.nanoTime();
                pair.first.lock(config(name, Duration.ofSeconds(30), Duration.ofMillis(1500))).orElseThrow().unlock();
                Optional<SimpleLock> otherInstance = pair.second.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
                otherInstance.ifPresent(SimpleLock::unlock);
                Optional<SimpleLock> sameInstance = pair.first.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
                sameInstance.ifPresent(SimpleLock::unlock);
                if ((otherInstance.isPresent() || sameInstance.isPresent()) && LockApp.millisSince(start) >= 1500) {
                    return false;
                }
                assertThat(otherInstance).as("another instance, during the lockAtLeastFor").isEmpty();
                assertThat(sameInstance).as("the same instance, during the lockAtLeastFor").isEmpty();
                awaitFree(pair.second, name, "the lock to end at its lockAtLeastFor");
                assertThat(LockApp.millisSince(start)).isGreaterThanOrEqualTo(1500);
                return true;
            });
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

    /**
     * Two windows end on the product's clock: the extension must come within the first lockAtMostFor (1 s), the check
     * past it within the new one (3 s, from the extension on). A try whose extension or check came after its window may
     * have ended proves nothing, and is made again on a name of its own.
     */
    private void extendMovesTheEndOfTheLock(Mode mode) throws Exception {
        try (Pair pair = Pair.of(mode, "shed-extend-" + mode)) {
            LockApp.conclusively("the extension and the check past the first lockAtMostFor", attempt -> {
                String name = "shed:extend-" + attempt;
                long start = System.nanoTime();
                SimpleLock lock = pair.first.lock(config(name, Duration.ofSeconds(1), Duration.ZERO)).orElseThrow();
                Optional<SimpleLock> extension = lock.extend(Duration.ofSeconds(3), Duration.ZERO);
                if (extension.isEmpty() && LockApp.millisSince(start) >= 1000) {
                    return false;
                }
                SimpleLock extended = extension.orElseThrow();
                assertThatThrownBy(lock::unlock).as("the extended lock replaces it")
                        .isInstanceOf(IllegalStateException.class);
                long extendedAt = System.nanoTime();
                // past the first lockAtMostFor the lock is still held
                LockApp.await("the first lockAtMostFor to pass", Duration.ofSeconds(30),
                        () -> System.nanoTime() - extendedAt > TimeUnit.MILLISECONDS.toNanos(1500));
                Optional<SimpleLock> second = pair.second.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
                second.ifPresent(SimpleLock::unlock);
                if (second.isPresent() && LockApp.millisSince(start) >= 3000) {
                    extended.unlock();
                    return false;
                }
                assertThat(second).as("another instance, past the first lockAtMostFor").isEmpty();
                // and the new lockAtMostFor ends it, though it is never unlocked
                awaitFree(pair.second, name, "the new lockAtMostFor to end it");
                assertThat(LockApp.millisSince(extendedAt)).isGreaterThanOrEqualTo(2900);
                extended.unlock(); // ended already at its lockAtMostFor: unlocking it too is harmless
                return true;
            });
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
