package io.quarkiverse.mysqllock.runtime.transaction;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import jakarta.transaction.Transaction;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandleDecorator;

/**
 * A hold whose release, asked while a JTA transaction is open, waits for that transaction to end: the transaction open
 * on the releasing thread, or else the one open where the lock was asked for (a release made later on another thread,
 * after {@code atLeastFor}, or by an asynchronous caller). The commit then lands while the lock is held. For the
 * caller the hold ends at its release (invalid, no token, no extension); the lock stays the thread's own until the
 * transaction ends, so that a method of the same lock called again in the same transaction nests rather than waiting
 * for itself.
 * <p>
 * A transaction must not commit under a lock lost before its commit: at such a release the lock is checked (the fenced
 * commit's check, else the engine's confirmation), and a lost one marks the transaction rollback-only and is answered.
 * With fenced commits ({@link FencedCommits}) every transaction that ends while the lock is held is checked before it
 * commits: one open where the lock was asked for, and one the holding thread begins.
 */
final class TransactionBoundHandle extends ControlledHandleDecorator {

    /**
     * The fenced holds the calling thread took for itself and has not released: a transaction it begins is checked.
     * Weakly: a handle its caller forgot is still garbage-collected (and its lock released by the leak watch).
     */
    private static final ThreadLocal<List<WeakReference<TransactionBoundHandle>>> HELD_HERE = new ThreadLocal<>();

    private final Transactions transactions;
    /** The transaction open where the lock was asked for, or null. */
    private final Transaction askedIn;
    private final String serverName;
    /** Null when commits are not fenced. */
    private final FencedCommits fences;
    /** The transactions whose commit a check of this hold's fence precedes; guarded by itself. */
    private final List<Transaction> fenced = new ArrayList<>(1);
    /** The transactions that checked this hold's fence already (under a row lock they keep); guarded by itself. */
    private final List<Transaction> checked = new ArrayList<>(1);
    /** Whether the caller released it (its lock's own release may be waiting for the transaction). */
    private volatile boolean released;
    /** The loss known when the caller released it. */
    private volatile LockLostException lossAtRelease;
    /**
     * Whether its lock was released at once, not after a transaction: a primitive's own hold (a reader's gate), or one
     * released with no transaction open or in one that will not commit. Its fence is checked before no commit.
     */
    private volatile boolean releasedAtOnce;

    /** @param ownThread whether the calling thread took the hold for itself (a transaction it begins is fenced) */
    TransactionBoundHandle(ControlledHandle handle, Transactions transactions, Transaction askedIn, String serverName,
            FencedCommits fences, boolean ownThread) {
        super(handle);
        this.transactions = transactions;
        this.askedIn = askedIn;
        this.serverName = serverName;
        this.fences = fences;
        if (fences != null) {
            if (askedIn != null) {
                fenceBeforeCommit(askedIn);
            }
            if (ownThread) {
                List<WeakReference<TransactionBoundHandle>> held = HELD_HERE.get();
                if (held == null) {
                    held = new ArrayList<>(2);
                    HELD_HERE.set(held);
                }
                held.removeIf(TransactionBoundHandle::gone);
                held.add(new WeakReference<>(this));
            }
        }
    }

    private static boolean gone(WeakReference<TransactionBoundHandle> hold) {
        TransactionBoundHandle handle = hold.get();
        return handle == null || handle.released;
    }

    /** Whether the calling thread holds locks whose transactions are fenced. */
    static boolean holdsFencedLocks() {
        List<WeakReference<TransactionBoundHandle>> held = HELD_HERE.get();
        return held != null && !held.isEmpty();
    }

    /** A transaction began on the calling thread: each fenced hold of the thread checks its fence before it commits. */
    static void transactionBegun(Transaction transaction) {
        List<WeakReference<TransactionBoundHandle>> held = HELD_HERE.get();
        if (held == null) {
            return;
        }
        held.removeIf(TransactionBoundHandle::gone);
        if (held.isEmpty()) {
            HELD_HERE.remove();
            return;
        }
        for (WeakReference<TransactionBoundHandle> hold : List.copyOf(held)) {
            TransactionBoundHandle handle = hold.get();
            if (handle != null) {
                handle.fenceBeforeCommit(transaction);
            }
        }
    }

    /** This hold is no longer the calling thread's own: taken on a worker for a caller elsewhere. */
    void disown() {
        forgetHere();
    }

    private void forgetHere() {
        List<WeakReference<TransactionBoundHandle>> held = HELD_HERE.get();
        if (held != null) {
            held.removeIf(hold -> hold.get() == this || gone(hold));
            if (held.isEmpty()) {
                HELD_HERE.remove();
            }
        }
    }

    /** Checks the fence before the transaction commits, once per transaction; a stale one stops the commit. */
    private void fenceBeforeCommit(Transaction transaction) {
        synchronized (fenced) {
            if (fenced.contains(transaction)) {
                return;
            }
            fenced.add(transaction);
        }
        if (!Transactions.around(transaction, () -> {
            LockLostException lost = checkFenceOnce(transaction);
            if (lost != null) {
                throw lost; // the transaction rolls back; its committer gets it as the cause
            }
        }, () -> forget(transaction))) {
            forget(transaction);
        }
    }

    /** The transaction ended: nothing of it is kept. */
    private void forget(Transaction transaction) {
        synchronized (fenced) {
            fenced.remove(transaction);
        }
        synchronized (checked) {
            checked.remove(transaction);
        }
    }

    /** The fence's check in the transaction open on this thread, unless it made it already. */
    private LockLostException checkFenceOnce(Transaction transaction) {
        if (releasedAtOnce) {
            return null;
        }
        synchronized (checked) {
            if (checked.contains(transaction)) {
                return null;
            }
        }
        LockLostException lost = handle.loss();
        if (lost != null) {
            return lost;
        }
        if (!fences.joined()) {
            return null; // nothing written to the lock's database yet: checked before the commit if something is
        }
        long token;
        try {
            token = handle.fencingToken();
        } catch (LockLostException e) {
            return e;
        }
        lost = fences.check(name(), serverName, token);
        if (lost == null) {
            synchronized (checked) {
                checked.add(transaction); // under a row lock the transaction keeps until it ends
            }
        }
        return lost;
    }

    @Override
    public LockLostException releaseReportingLoss() {
        if (!releasing()) {
            return lossAtRelease;
        }
        Transaction current = transactions.open();
        Transaction transaction = current != null ? current
                : askedIn != null && Transactions.isOpen(askedIn) ? askedIn : null;
        // marked rollback-only, nothing of it commits; and a transaction that takes no synchronization is ending
        if (transaction == null || !Transactions.isActive(transaction) || !Transactions.afterCompletion(transaction,
                "The release of lock '" + name() + "'", handle::releaseReportingLoss)) {
            return releasedNow();
        }
        // released once the transaction ends: checked first (the release could not wait for the row lock the check
        // keeps in the transaction)
        LockLostException lost = lossBeforeCommit(transaction, transaction == current);
        if (lost != null) {
            Transactions.rollbackOnly(transaction);
        }
        lossAtRelease = lost;
        return lost;
    }

    /**
     * Whether the lock, released while the transaction is open, is lost: known lost, found stale by the fenced commit's
     * check (in the transaction, when it is open on this thread), or not confirmed by the engine (a NAMED lock's session
     * asked; a lease that may have ended).
     */
    private LockLostException lossBeforeCommit(Transaction transaction, boolean onThisThread) {
        LockLostException lost = handle.loss();
        if (lost != null) {
            return lost;
        }
        if (fences != null && onThisThread) {
            fenceBeforeCommit(transaction); // checked again before the commit if this check fails to run
            return checkFenceOnce(transaction);
        }
        if (handle.confirm(System.nanoTime())) {
            return null;
        }
        lost = handle.loss();
        return lost != null ? lost
                : new LockLostException(name(), LockLostException.Reason.NOT_HELD, "Lock '" + name() + "' was not"
                        + " held any more when it was released inside a transaction: the transaction does not commit",
                        null);
    }

    @Override
    public void release() {
        releaseReportingLoss();
    }

    /** Released at once, whatever transaction is open. */
    void releaseAtOnce() {
        if (releasing()) {
            releasedNow();
        }
    }

    /** Marks the hold released by its caller; false if it already was. */
    private synchronized boolean releasing() {
        if (released) {
            return false;
        }
        released = true;
        forgetHere();
        return true;
    }

    private LockLostException releasedNow() {
        releasedAtOnce = true;
        LockLostException lost = handle.releaseReportingLoss();
        lossAtRelease = lost;
        return lost;
    }

    @Override
    public boolean isValid() {
        return !released && handle.isValid();
    }

    @Override
    public LockLostException loss() {
        return released ? lossAtRelease : handle.loss();
    }

    @Override
    public boolean confirmedWithin(long nanos) {
        return !released && handle.confirmedWithin(nanos);
    }

    @Override
    public boolean confirm(long sinceNanos) {
        return !released && handle.confirm(sinceNanos);
    }

    @Override
    public long fencingToken() {
        requireHeld("its fencing token is no longer valid");
        return handle.fencingToken();
    }

    @Override
    public boolean extend(Duration atMostFor) {
        requireHeld("it cannot be extended");
        return handle.extend(atMostFor);
    }

    @Override
    public LockHandle onLost(Consumer<LockLostException> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("onLost listener must not be null");
        }
        if (released) {
            LockLostException lost = lossAtRelease;
            if (lost != null) {
                listener.accept(lost);
            }
            return this; // a released hold hears of no later loss
        }
        handle.onLost(listener);
        return this;
    }

    private void requireHeld(String consequence) {
        if (released) {
            throw new IllegalStateException("Lock '" + name() + "' was released: " + consequence
                    + (releasedAtOnce ? "" : " (its lock is given back once the transaction it was released in ends)"));
        }
    }

    @Override
    public String toString() {
        return released ? "LockHandle[" + name() + ", released]" : handle.toString();
    }
}
