package io.quarkiverse.mysqllock.runtime.engine;

import java.time.Duration;

/**
 * What a caller asks an engine for: a name, how long it waits, what a lock still busy at the end of the wait gives,
 * who owns the hold, and how long the hold may outlive a holder that stops renewing it.
 *
 * @param lock the name
 * @param waitNanos how long to wait, at least 0 (0: one attempt)
 * @param whenBusy what a lock still held elsewhere at the deadline gives
 * @param owner who owns the hold; see {@link Owner}
 * @param atMostForNanos {@code @Locked(atMostFor)}: the longest the lock may stay taken if its holder stops (dies,
 *        hangs), 0 for no such bound. The LEASE engine takes a lease of this length and does not renew it. NAMED and
 *        in-memory locks have no lease: their engine ends the hold at the cap through {@link HoldCaps} (told lost,
 *        {@code LEASE_EXPIRED}, then freed), so that a hung but live holder does not keep the lock for ever.
 */
public record LockRequest(LockName lock, long waitNanos, WhenBusy whenBusy, Owner owner, long atMostForNanos) {

    /** What an acquisition that finds the lock still held elsewhere at its deadline gives. */
    public enum WhenBusy {
        /** A {@link io.quarkiverse.mysqllock.LockNotAcquiredException} with reason BUSY. */
        THROW,
        /** No handle ({@code null} from the engine, an empty {@code Optional} or a skipped method for the caller). */
        NOTHING
    }

    /** Who owns a hold. */
    public enum Owner {
        /** The calling thread: if it acquires a name it holds, it gets a nested hold of the same lock. */
        CALLING_THREAD,
        /**
         * No thread: for acquisitions made on a worker thread on behalf of an asynchronous caller. The worker is not
         * the owner, and a later acquisition on the same worker must contend like any other.
         */
        NONE
    }

    public LockRequest {
        if (waitNanos < 0 || atMostForNanos < 0) {
            throw new IllegalArgumentException("A lock request's wait and atMostFor must not be negative");
        }
    }

    /** The common request: the calling thread owns the hold, a lock still busy at the deadline throws. */
    public static LockRequest of(LockName lock, long waitNanos) {
        return new LockRequest(lock, waitNanos, WhenBusy.THROW, Owner.CALLING_THREAD, 0);
    }

    public LockRequest whenBusy(WhenBusy answer) {
        return new LockRequest(lock, waitNanos, answer, owner, atMostForNanos);
    }

    public LockRequest ownedBy(Owner holder) {
        return new LockRequest(lock, waitNanos, whenBusy, holder, atMostForNanos);
    }

    public LockRequest atMostFor(Duration atMostFor) {
        return new LockRequest(lock, waitNanos, whenBusy, owner, atMostFor.toNanos());
    }

    public String name() {
        return lock.name();
    }

    public String serverName() {
        return lock.serverName();
    }

    public boolean throwIfBusy() {
        return whenBusy == WhenBusy.THROW;
    }

    /** The thread that owns the hold, or null if none does. */
    public Thread ownerThread() {
        return owner == Owner.CALLING_THREAD ? Thread.currentThread() : null;
    }
}
