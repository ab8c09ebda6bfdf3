package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockedRun;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code tryWithLock} runs an action if the lock is free and says whether it ran (ShedLock's {@code TaskResult});
 * {@code asLock} is the lock as a {@link Lock}, with that interface's contract: re-entrant per thread, interruptible
 * where it says so, {@code unlock()} only by a holder. On NAMED (the application's engine) and LEASE (another instance).
 */
class TryWithLockAndLockViewTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void tryWithLockRunsWhenFreeAndSaysSoWhenHeldElsewhere() throws Exception {
        LockedRun<String> ran = locks.tryWithLock("try:free", () -> "done");
        assertThat(ran.ran()).isTrue();
        assertThat(ran.result()).isEqualTo("done");
        assertThat(LockApp.otherThreadAcquires(locks, "try:free")).as("released after the action").isTrue();

        try (LockHandle elsewhere = Background.supply(() -> locks.acquire("try:held", Duration.ZERO)).get(10,
                TimeUnit.SECONDS)) {
            AtomicBoolean ranAction = new AtomicBoolean();
            LockedRun<Void> notRun = locks.tryWithLock("try:held", () -> ranAction.set(true));
            assertThat(notRun.ran()).isFalse();
            assertThat(ranAction).isFalse();
            assertThat(notRun.orElse(null)).isNull();
            assertThatThrownBy(notRun::result).isInstanceOf(NoSuchElementException.class)
                    .hasMessageContaining("'try:held' was held elsewhere");
        }
    }

    @Test
    void tryWithLockReleasesWhenTheActionThrowsAndWaitsWhenAsked() throws Exception {
        assertThatThrownBy(() -> locks.tryWithLock("try:throws", () -> {
            throw new IllegalStateException("broken action");
        })).isInstanceOf(IllegalStateException.class).hasMessage("broken action");
        assertThat(LockApp.otherThreadAcquires(locks, "try:throws")).isTrue();

        LockHandle elsewhere = Background.supply(() -> locks.acquire("try:wait", Duration.ZERO)).get(10, TimeUnit.SECONDS);
        CompletableFuture<Void> releaseSoon = Background.run(() -> {
            LockApp.await("the waiter to wait", Duration.ofSeconds(10), () -> locks.isLocked("try:wait"));
            elsewhere.release();
        });
        assertThat(locks.tryWithLock("try:wait", Duration.ofSeconds(10), () -> 42).result()).isEqualTo(42);
        releaseSoon.get(10, TimeUnit.SECONDS);
    }

    @Test
    void asLockIsReentrantAndOnlyItsHolderUnlocksIt() throws Exception {
        Lock lock = locks.asLock("view:basic");
        lock.lock();
        assertThat(lock.tryLock()).as("the holder again").isTrue();
        assertThat(Background.supply(lock::tryLock).get(10, TimeUnit.SECONDS)).as("another thread").isFalse();
        lock.unlock();
        assertThat(LockApp.otherThreadAcquires(locks, "view:basic")).as("still held once").isFalse();
        lock.unlock();
        assertThat(LockApp.otherThreadAcquires(locks, "view:basic")).as("released").isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("'view:basic' is not held by this thread");
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
    }

    /**
     * A lock taken through one view is given back through another view of the same name: the holds are the thread's.
     * Before, each view kept its own, the second view's unlock() was refused and the lock stayed held for good.
     */
    @Test
    void aLockTakenThroughOneViewIsGivenBackThroughAnother() throws Exception {
        locks.asLock("view:two").lock();
        locks.asLock("view:two").unlock();
        assertThat(LockApp.otherThreadAcquires(locks, "view:two")).as("released").isTrue();
        assertThatThrownBy(() -> locks.asLock("view:two").unlock()).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void asLockWaitsInterruptiblyWhereTheContractSaysAndNotInLock() throws Exception {
        Lock lock = locks.asLock("view:wait");
        LockHandle elsewhere = Background.supply(() -> locks.acquire("view:wait", Duration.ZERO)).get(10, TimeUnit.SECONDS);
        try {
            long start = System.nanoTime();
            assertThat(lock.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(250);

            Thread.currentThread().interrupt();
            assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
            assertThat(Thread.interrupted()).as("the interrupt is consumed by the exception").isFalse();

            // lock() waits through an interrupt and keeps it for the caller
            CountDownLatch waiting = new CountDownLatch(1);
            CompletableFuture<Boolean> locked = Background.supply(() -> {
                Thread.currentThread().interrupt();
                waiting.countDown();
                lock.lock();
                boolean interruptKept = Thread.interrupted();
                lock.unlock();
                return interruptKept;
            });
            assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
            elsewhere.release();
            assertThat(locked.get(30, TimeUnit.SECONDS)).as("lock() returned holding it, the interrupt kept").isTrue();
        } finally {
            elsewhere.release();
        }
    }

    /** On LEASE, between two instances: the view and tryWithLock exclude the other instance's holder. */
    @Test
    void onLeaseBetweenTwoInstances() throws Exception {
        try (StandaloneLocks a = StandaloneLocks.Settings.of("view-lease-a").mode(Mode.LEASE).table("view_lease").start();
                StandaloneLocks b = StandaloneLocks.Settings.of("view-lease-b").mode(Mode.LEASE).table("view_lease")
                        .start()) {
            Lock onA = a.locks.asLock("view:lease");
            onA.lock();
            try {
                assertThat(b.locks.asLock("view:lease").tryLock()).isFalse();
                assertThat(b.locks.tryWithLock("view:lease", () -> "b").ran()).isFalse();
            } finally {
                onA.unlock();
            }
            assertThat(b.locks.tryWithLock("view:lease", () -> "b").result()).isEqualTo("b");
        }
    }
}
