package io.quarkiverse.mysqllock.runtime.named;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Predicate;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.LossNotifier;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * Issues a named lock's fencing token once, on first demand, from the lock table, and only while the server shows the
 * lock held by its session; never on the pinned session itself. One issue at a time per lock ({@link
 * NamedLock#fenceIssue}); the others then read it.
 */
final class FenceIssuer {

    private final ConnectionSource connections;
    private final LockTable table;
    private final LossNotifier notifier;
    /**
     * Whether a lock is valid: held, and this instance's membership of its fleet confirmed. A fence is issued only
     * between two such answers: a lock whose membership lapsed may be held as a lease by another engine's instance.
     */
    private final Predicate<NamedLock> valid;

    FenceIssuer(ConnectionSource connections, LockTable table, LossNotifier notifier, Predicate<NamedLock> valid) {
        this.connections = connections;
        this.table = table;
        this.notifier = notifier;
        this.valid = valid;
    }

    /**
     * Increments the name's fence in the lock table on a pooled connection, then checks there that this lock's
     * session holds the lock: held then means held since the grant, so the fence was issued while it was held (and is
     * below every later holder's). Neither statement runs on the pinned session, so a row lock the update waits for (a
     * transaction holding the row) never holds the session's mutex, and an error of these statements fails this call
     * alone, not the locks of the session's co-tenants.
     */
    long fencingToken(NamedLock lock) {
        requireValid(lock);
        if (lock.released) {
            throw new IllegalStateException("Lock '" + lock.name + "' was released: it has no fencing token");
        }
        long fence = lock.fence;
        if (fence != 0) {
            return fence;
        }
        if (!BlockingOperationControl.isBlockingAllowed()) {
            throw new IllegalStateException("The first fencingToken() of lock '" + lock.name + "' reads the"
                    + " database and was called on an event-loop thread. Call it on a worker thread (for a Uni:"
                    + " .emitOn(Infrastructure.getDefaultWorkerPool()) first)");
        }
        lock.fenceIssue.lock();
        try {
            if (lock.fence == 0) {
                long issued = issueFence(lock, 0);
                requireValid(lock); // still valid once issued: issued while it was
                lock.fence = issued;
            }
            return lock.fence;
        } finally {
            lock.fenceIssue.unlock();
        }
    }

    /**
     * With fenced commits, a grant's token, issued before its holder begins: its increment waits for a transaction of
     * the previous holder that checked the fence (a shared row lock on the name's row) at most until {@code deadline}
     * ({@link System#nanoTime()}; at least the server's 1 s).
     *
     * @throws RowHeld if that transaction had not ended by then: the lock is busy
     */
    void issueAtGrant(NamedLock lock, long deadline) {
        lock.fenceIssue.lock();
        try {
            if (lock.fence == 0) {
                long seconds = (Math.max(0, deadline - System.nanoTime()) + 999_999_999L) / 1_000_000_000L;
                long issued = issueFence(lock, seconds);
                requireValid(lock);
                lock.fence = issued;
            }
        } finally {
            lock.fenceIssue.unlock();
        }
    }

    /** A grant's token waited for the previous holder's transaction longer than the acquisition may wait. */
    static final class RowHeld extends RuntimeException {
        RowHeld(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private void requireValid(NamedLock lock) {
        if (!lock.released && !valid.test(lock)) {
            throw new LockLostException(lock.name, lock.lost.reason(),
                    "Lock '" + lock.name + "' is lost: no fencing token can be issued", lock.lost);
        }
    }

    /** @param rowWaitSeconds how long its increment may wait for a row lock; 0 for the session's own wait */
    private long issueFence(NamedLock lock, long rowWaitSeconds) {
        ConnectionSource.Borrowed borrowed = null;
        long fence;
        Long holder;
        try {
            borrowed = connections.borrowForStatements(lock.name, 0);
            Connection raw = borrowed.raw();
            fence = rowWaitSeconds == 0 ? table.nextFence(raw, lock.serverName)
                    : Statements.withRowWaitOf(raw, connections.server(raw), rowWaitSeconds,
                            prefix -> table.nextFence(raw, lock.serverName, prefix));
            holder = SessionStatements.holderOf(raw, lock.serverName);
        } catch (SQLException e) {
            if (borrowed != null) {
                connections.discard(borrowed.pooled());
            }
            if (rowWaitSeconds > 0 && SqlErrors.isLockWaitTimeout(e)) {
                throw new RowHeld("Lock '" + lock.name + "': its token waited " + rowWaitSeconds + " s for a transaction"
                        + " of its previous holder, which keeps the name's fence until it commits", e);
            }
            if (SqlErrors.isReadOnly(e)) {
                connections.readOnlyFound("fencing token of lock '" + lock.name + "'");
            }
            throw new IllegalStateException("Lock '" + lock.name + "': no fencing token could be issued (the lock is"
                    + " not known to be lost: isValid() and its loss listeners tell if it is): " + SqlErrors.describe(e),
                    e);
        } catch (RuntimeException e) {
            if (borrowed != null) {
                connections.discard(borrowed.pooled()); // in an unknown state: never back to the pool
            }
            throw e;
        }
        connections.giveBack(borrowed);
        if (holder == null || holder != lock.session.connectionId) {
            LockLostException lost = new LockLostException(lock.name, LockLostException.Reason.NOT_HELD,
                    "Lock '" + lock.name + "' is lost: while its fencing token was issued, the server showed it "
                            + (holder == null ? "free" : "held by connection " + holder)
                            + ", not by this instance's session " + lock.session.connectionId,
                    null);
            notifier.lose(lock, lost.reason(), lost.getMessage(), null);
            throw lost;
        }
        return fence;
    }
}
