package io.quarkiverse.mysqllock.bench;

import java.time.Duration;

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

    static Subject withLock(String name, LockManager locks) {
        return Subject.of(name, lockName -> () -> locks.withLock(lockName, Duration.ZERO, () -> {
        }));
    }

    /** {@code @Locked("{0}")} on an empty method: the interceptor's own cost on top of {@code withLock}. */
    static Subject locked(String name, LockedTarget target) {
        return Subject.of(name, lockName -> () -> target.empty(lockName));
    }
}
