package io.quarkiverse.mysqllock.runtime.coordination;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
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
 * The number of read permits is the fleet's ({@link PermitCounts}), and only ever goes up. Readers and writers read it
 * while they hold the gate, and a reader counts as inside only once it found, after taking its permit, that it held the
 * gate all along. A writer holds the gate from its own read on, so every reader inside read the number before it did
 * (no more than the writer read: it only goes up) and holds a permit the writer takes; no reader gets in meanwhile.
 * Raising the number needs no lock.
 */
public final class GatedReadWriteLock implements DistributedReadWriteLock {

    private final LockManager locks;
    /** Releases at once, inside a transaction too, the holds an acquisition takes for itself (the gate a reader passes). */
    private final Consumer<LockHandle> giveBack;
    private final String name;
    private final String gate;
    private final PermitSemaphore readers;
    /** Whether a handle is valid and was found held on the server after a moment, asking the server if need be. */
    private final BiPredicate<LockHandle, Long> stillHeld;

    /** The name must have been checked by the caller; the count is checked here. */
    private final Function<Supplier<LockHandle>, Uni<LockHandle>> async;

    /** @param async runs a blocking acquisition on a worker thread, giving back a handle its subscriber no longer wants */
    public GatedReadWriteLock(LockManager locks, Consumer<LockHandle> giveBack, String name,
            BiPredicate<LockHandle, Long> stillHeld, PermitCounts counts,
            Function<Supplier<LockHandle>, Uni<LockHandle>> async) {
        this.giveBack = giveBack;
        this.async = async;
        this.locks = locks;
        this.stillHeld = stillHeld;
        this.name = name;
        this.gate = name + "#rw-gate";
        this.readers = PermitSemaphore.readersOf(locks, giveBack, name, counts, async);
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
        int stored = this.readers.change(Math.max(readers, 1));
        if (stored > readers) {
            throw new IllegalArgumentException("Read-write lock '" + name + "' has " + stored + " readers, and its"
                    + " readers cannot be lowered (to " + readers + "): a writer would take fewer read permits than a"
                    + " reader inside may hold");
        }
    }

    @Override
    public LockHandle acquireRead(Duration wait) {
        long start = System.nanoTime();
        return tryAcquireRead(wait).orElseThrow(() -> PermitSemaphore.busy(name, start,
                "a writer holds or waits for it, or all its read permits are held"));
    }

    /**
     * The gate, a read permit while it is held, then whether it was held all along (asked of the server if need be): a
     * reader whose gate was lost meanwhile (its session killed, its lease taken over) may have read the number of readers
     * after a writer got in, so it gives its permit back and passes the gate again, with what is left of the wait.
     */
    @Override
    public Optional<LockHandle> tryAcquireRead(Duration wait) {
        long deadline = Waits.deadline("the read lock of " + name, wait);
        while (true) {
            Optional<LockHandle> passing = takeGate(Waits.left(deadline));
            if (passing.isEmpty()) {
                return passing;
            }
            Optional<LockHandle> read;
            LockHandle gate = passing.get();
            try {
                read = readers.tryAcquire(Waits.left(deadline));
                if (read.isEmpty() || gateStillHeld(read.get(), gate)) {
                    return read;
                }
            } finally {
                giveBack.accept(gate);
            }
            giveBack.accept(read.get());
            if (deadline - System.nanoTime() <= 0) {
                return Optional.empty();
            }
        }
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
            giveBack.accept(write.get());
            if (deadline - System.nanoTime() <= 0) {
                throw new LockNotAcquiredException(name, wait, LockNotAcquiredException.Reason.DATABASE_ERROR, null,
                        "The write lock of " + name + " was not acquired: its gate was lost while the readers were"
                                + " waited for, and the wait is over",
                        null);
            }
        }
    }

    /**
     * Whether the gate, taken before the permits, was still held after them (asked of the server if need be); if asking
     * fails, what was taken with it is given back and the failure thrown.
     */
    private boolean gateStillHeld(LockHandle taken, LockHandle gate) {
        try {
            return stillHeld.test(gate, System.nanoTime());
        } catch (RuntimeException | Error e) {
            giveBack.accept(taken);
            throw e;
        }
    }

    /** Keeping the gate, every read permit by the deadline, or nothing (the gate given back). */
    private Optional<LockHandle> waitForReaders(LockHandle kept, long deadline) {
        try {
            return Optional.of(new WriteHold(name, kept, locks.acquireAll(readers.permitNames(), Waits.left(deadline))));
        } catch (LockNotAcquiredException e) {
            giveBack.accept(kept);
            if (e.reason() == LockNotAcquiredException.Reason.BUSY) {
                return Optional.empty();
            }
            throw e;
        } catch (RuntimeException | Error e) {
            giveBack.accept(kept);
            throw e;
        }
    }

    @Override
    public String toString() {
        return "DistributedReadWriteLock[" + name + "]";
    }
}
