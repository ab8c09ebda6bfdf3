package io.quarkiverse.mysqllock.runtime.coordination;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.DistributedReadWriteLock;
import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockOptions;
import io.smallrye.mutiny.Uni;

/**
 * A read-write lock from exclusive locks: a gate that readers pass and a writer keeps, and a semaphore of read
 * permits that a writer takes whole. A writer holding the gate lets no new reader in, so it waits only for the readers
 * already inside: writers are not starved.
 * <p>
 * The number of read permits is the fleet's ({@link PermitCounts}), and only ever goes up; readers and writers read it
 * while they hold the gate, so a writer reads it after every reader inside did, and takes every permit they can hold.
 */
public final class GatedReadWriteLock implements DistributedReadWriteLock {

    private final LockManager locks;
    private final String name;
    private final String gate;
    private final PermitSemaphore readers;
    /** Whether a handle is valid and was found held on the server after a moment, asking the server if need be. */
    private final BiPredicate<LockHandle, Long> stillHeld;

    /** The name must have been checked by the caller; the count is checked here. */
    private final Function<Supplier<LockHandle>, Uni<LockHandle>> async;

    /** @param async runs a blocking acquisition on a worker thread, giving back a handle its subscriber no longer wants */
    public GatedReadWriteLock(LockManager locks, String name, BiPredicate<LockHandle, Long> stillHeld,
            PermitCounts counts, Function<Supplier<LockHandle>, Uni<LockHandle>> async) {
        this.async = async;
        this.locks = locks;
        this.stillHeld = stillHeld;
        this.name = name;
        this.gate = name + "#rw-gate";
        this.readers = new PermitSemaphore(locks, name + "#rw-read", DEFAULT_MAX_READERS, counts, async);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int maxReaders() {
        return readers.permits();
    }

    @Override
    public void raiseMaxReaders(int readers) {
        if (readers > DistributedSemaphore.MAX_PERMITS) {
            throw new IllegalArgumentException("Read-write lock '" + name + "' can have at most "
                    + DistributedSemaphore.MAX_PERMITS + " readers, not " + readers);
        }
        int stored = this.readers.change(Math.max(readers, 1), true);
        if (stored > readers) {
            throw new IllegalArgumentException("The readers of read-write lock '" + name + "' cannot be lowered (from "
                    + stored + " to " + readers + "): a writer would take fewer read permits than a reader inside may"
                    + " hold");
        }
    }

    @Override
    public LockHandle acquireRead(Duration wait) {
        long start = System.nanoTime();
        return tryAcquireRead(wait).orElseThrow(() -> PermitSemaphore.busy(name, start,
                "a writer holds or waits for it, or all its read permits are held"));
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
    public Uni<LockHandle> acquireReadAsync(Duration wait) {
        Waits.deadline("the read lock of " + name, wait);
        return async.apply(() -> acquireRead(wait));
    }

    @Override
    public Uni<LockHandle> acquireWriteAsync(Duration wait) {
        Waits.deadline("the write lock of " + name, wait);
        return async.apply(() -> acquireWrite(wait));
    }

    @Override
    public LockHandle acquireWrite(Duration wait) {
        long start = System.nanoTime();
        return tryAcquireWrite(wait).orElseThrow(() -> PermitSemaphore.busy(name, start,
                "another writer holds it, or readers still hold read permits"));
    }

    /**
     * The gate, then every read permit by the deadline. The gate may be lost while the readers are waited for (its
     * session killed, its lease taken over): then everything is given back and the write lock taken again with what is
     * left of the wait, so that a writer never returns without its gate.
     */
    @Override
    public Optional<LockHandle> tryAcquireWrite(Duration wait) {
        long deadline = Waits.deadline("the write lock of " + name, wait);
        while (true) {
            Optional<LockHandle> kept = takeGate(Waits.left(deadline));
            if (kept.isEmpty()) {
                return kept;
            }
            Optional<LockHandle> write = waitForReaders(kept.get(), deadline);
            if (write.isEmpty() || gateStillHeld(write.get(), kept.get())) {
                return write;
            }
            write.get().release();
            if (deadline - System.nanoTime() <= 0) {
                throw new LockNotAcquiredException(name, wait, LockNotAcquiredException.Reason.DATABASE_ERROR, null,
                        "The write lock of " + name + " was not acquired: its gate was lost while the readers were"
                                + " waited for, and the wait is over",
                        null);
            }
        }
    }

    /**
     * Whether the gate, taken before the wait for the readers, was still held after it (asked of the server if need be);
     * if asking fails, the whole write hold is given back and the failure thrown.
     */
    private boolean gateStillHeld(LockHandle write, LockHandle gate) {
        try {
            return stillHeld.test(gate, System.nanoTime());
        } catch (RuntimeException | Error e) {
            write.release();
            throw e;
        }
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
