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
        return takeGate(wait).flatMap(passing -> {
            try (passing) {
                return readers.tryAcquire(Waits.left(deadline));
            }
        });
    }

    /** The gate, within {@code wait}: empty while a writer keeps it (or waits for the readers inside). */
    private Optional<LockHandle> takeGate(Duration wait) {
        return locks.tryAcquire(gate, LockOptions.waitingUpTo(wait).withoutNesting());
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
        return takeGate(wait).flatMap(kept -> waitForReaders(kept, deadline));
    }

    /** Keeping the gate, every read permit by the deadline, or nothing (the gate given back). */
    private Optional<LockHandle> waitForReaders(LockHandle kept, long deadline) {
        try {
            return Optional.of(new WriteHold(name, kept, locks.acquireAll(readers.permitNames(), Waits.left(deadline))));
        } catch (LockNotAcquiredException e) {
            kept.release();
            if (e.reason() == LockNotAcquiredException.Reason.BUSY) {
                return Optional.empty();
            }
            throw e;
        } catch (RuntimeException | Error e) {
            kept.release();
            throw e;
        }
    }

    @Override
    public String toString() {
        return "DistributedReadWriteLock[" + name + "]";
    }
}
