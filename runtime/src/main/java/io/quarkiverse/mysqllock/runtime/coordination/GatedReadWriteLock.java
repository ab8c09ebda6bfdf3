package io.quarkiverse.mysqllock.runtime.coordination;

import java.time.Duration;
import java.util.Optional;

import io.quarkiverse.mysqllock.DistributedReadWriteLock;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockOptions;

/**
 * A read-write lock from exclusive locks: a gate that readers pass and a writer keeps, and a semaphore of read
 * permits that a writer takes whole. A writer holding the gate lets no new reader in, so it waits only for the readers
 * already inside: writers are not starved.
 */
public final class GatedReadWriteLock implements DistributedReadWriteLock {

    private final LockManager locks;
    private final String name;
    private final String gate;
    private final PermitSemaphore readers;

    /** The name must have been checked by the caller; the count is checked here. */
    public GatedReadWriteLock(LockManager locks, String name) {
        this.locks = locks;
        this.name = name;
        this.gate = name + "#rw-gate";
        this.readers = new PermitSemaphore(locks, name + "#rw-read", MAX_READERS);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public LockHandle acquireRead(Duration wait) {
        long start = System.nanoTime();
        return tryAcquireRead(wait).orElseThrow(() -> PermitSemaphore.busy(name, start,
                "a writer holds or waits for it, or all " + MAX_READERS + " read permits are held"));
    }

    @Override
    public Optional<LockHandle> tryAcquireRead(Duration wait) {
        long deadline = Waits.deadline("the read lock of " + name, wait);
        Optional<LockHandle> passing = locks.tryAcquire(gate, LockOptions.waitingUpTo(wait).withoutNesting());
        if (passing.isEmpty()) {
            return Optional.empty();
        }
        try (LockHandle held = passing.get()) {
            return readers.tryAcquire(Waits.left(deadline));
        }
    }

    @Override
    public LockHandle acquireWrite(Duration wait) {
        long start = System.nanoTime();
        return tryAcquireWrite(wait).orElseThrow(() -> PermitSemaphore.busy(name, start,
                "another writer holds it, or readers still hold read permits"));
    }

    @Override
    public Optional<LockHandle> tryAcquireWrite(Duration wait) {
        long deadline = Waits.deadline("the write lock of " + name, wait);
        Optional<LockHandle> kept = locks.tryAcquire(gate, LockOptions.waitingUpTo(wait).withoutNesting());
        if (kept.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new WriteHold(name, kept.get(), locks.acquireAll(readers.permitNames(),
                    Waits.left(deadline))));
        } catch (LockNotAcquiredException e) {
            kept.get().release();
            if (e.reason() == LockNotAcquiredException.Reason.BUSY) {
                return Optional.empty();
            }
            throw e;
        } catch (RuntimeException | Error e) {
            kept.get().release();
            throw e;
        }
    }

    @Override
    public String toString() {
        return "DistributedReadWriteLock[" + name + "]";
    }
}
