package io.quarkiverse.mysqllock.bench;

import java.time.Duration;

import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;

/** The extension: {@code acquire} + {@code release}, {@code withLock}, and a {@code @Locked} method. */
final class Engines {

    private Engines() {
    }

    static Subject acquireRelease(String name, LockManager locks) {
        return Subject.of(name, lockName -> () -> {
            LockHandle handle = locks.acquire(lockName, Duration.ZERO);
            handle.release();
        });
    }

    /**
     * A permit of one semaphore shared by every thread, with as many permits as threads: a thread always finds one
     * free, so what is measured is a permit's acquire + release, not a wait.
     */
    static Subject permit(String name, LockManager locks, int permits) {
        DistributedSemaphore semaphore = locks.semaphore("bench:semaphore:" + permits, permits);
        return Subject.of(name, lockName -> () -> semaphore.acquire(Duration.ofSeconds(5)).release());
    }

    static Subject withLock(String name, LockManager locks) {
        return Subject.of(name, lockName -> () -> locks.withLock(lockName, Duration.ZERO, () -> {
        }));
    }

    /** {@code @Locked("{0}")} on an empty method: the interceptor's own cost on top of {@code withLock}. */
    static Subject locked(String name, LockedTarget target) {
        return Subject.of(name, lockName -> () -> target.empty(lockName));
    }

    /**
     * A subject's cycles on a lock the thread already holds: every cycle is a nested hold, with no round trip, so
     * what is measured is the library's own time per call, free of the database's noise.
     */
    static Subject nested(Subject subject, LockManager locks) {
        return Subject.of(subject.name() + ", nested", lockName -> {
            LockHandle outer = locks.acquire(lockName, Duration.ZERO);
            Subject.Worker inner = subject.worker(lockName);
            return new Subject.Worker() {
                @Override
                public void cycle() throws Exception {
                    inner.cycle();
                }

                @Override
                public void close() {
                    outer.release();
                }
            };
        });
    }
}
