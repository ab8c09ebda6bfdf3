package io.quarkiverse.mysqllock.runtime.jdbc;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A pooled connection kept out of the pool for statements an engine runs again and again: one run at a time uses it, so
 * that they need no borrow (two thread hand-offs) and no free connection in the pool. A run that finds it in use longer
 * than it may wait (a stalled statement) goes on a connection borrowed for that run alone. A connection that failed, or
 * reached a read-only server, or is in an unknown state, is destroyed and the next run borrows another. Every statement
 * on it is bounded by the time limit its run gives.
 */
public final class KeptConnection {

    private final ConnectionSource connections;
    private final String purpose;
    /** Guards {@link #borrowed} and {@link #lastUsed}. */
    private final ReentrantLock lock = new ReentrantLock();
    private ConnectionSource.Borrowed borrowed;
    private long lastUsed;
    /** Set at shutdown: no connection is borrowed any more. */
    private volatile boolean closed;

    /** @param purpose what it is for, in place of a lock name in the pool's error messages */
    public KeptConnection(ConnectionSource connections, String purpose) {
        this.connections = connections;
        this.purpose = purpose;
    }

    /**
     * Runs the work on the kept connection, borrowing one first if none is kept; if another run holds it for longer than
     * {@code waitNanos}, on a connection borrowed for this run alone ({@code Long.MAX_VALUE}: wait as long as it takes).
     * Each statement answers within {@code boundMillis} or the connection is closed under it. The run serves others than
     * its thread (a batch, the membership): an interrupt of the thread is kept for it, not let fail the run.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    public <T> T run(long waitNanos, long boundMillis, ConnectionSource.Work<T> work) throws SQLException {
        if (closed) {
            throw new IllegalStateException("The lock manager is shut down");
        }
        boolean interrupted = Thread.interrupted();
        try {
            if (!lockWithin(waitNanos)) {
                return connections.withStatements(purpose, raw -> {
                    Statements.bound(raw, boundMillis);
                    return work.run(raw);
                });
            }
            try {
                return runKept(boundMillis, work);
            } finally {
                if (closed && borrowed != null) {
                    discard(); // shut down while this run was stalled: nothing kept after it
                }
                lock.unlock();
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Takes the lock within the wait, whatever interrupts come meanwhile (kept for the caller). */
    private boolean lockWithin(long waitNanos) {
        if (waitNanos == Long.MAX_VALUE) {
            lock.lock();
            return true;
        }
        long deadline = System.nanoTime() + waitNanos;
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return lock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The work on the kept connection; the lock is held. */
    private <T> T runKept(long boundMillis, ConnectionSource.Work<T> work) throws SQLException {
        if (closed) {
            throw new IllegalStateException("The lock manager is shut down");
        }
        if (borrowed == null) {
            borrowed = connections.borrowForStatements(purpose, 0);
        }
        T result;
        try {
            Statements.bound(borrowed.raw(), boundMillis);
            result = work.run(borrowed.raw());
        } catch (SQLException e) {
            // only an error of the statement alone (a row lock, a deadlock) leaves the connection as good as before;
            // after any other, its session's state (a transaction, a session variable not set back) is in doubt
            boolean statementOnly = SqlErrors.isLockWaitTimeout(e) || SqlErrors.isDeadlock(e);
            if (!statementOnly || !autoCommitOn(borrowed)) {
                discard();
            }
            throw e;
        } catch (RuntimeException | Error e) {
            discard(); // in an unknown state (a transaction open?): never back to the pool
            throw e;
        }
        if (!autoCommitOn(borrowed)) {
            discard(); // a transaction left open: never used again
        }
        lastUsed = System.nanoTime();
        return result;
    }

    private static boolean autoCommitOn(ConnectionSource.Borrowed connection) {
        try {
            return connection.raw().getAutoCommit();
        } catch (SQLException e) {
            return false;
        }
    }

    /** Keeps a connection borrowed for statements, if none is kept yet; gives it back otherwise. */
    public void adopt(ConnectionSource.Borrowed connection) {
        lock.lock();
        try {
            if (borrowed == null && !closed) {
                borrowed = connection;
                lastUsed = System.nanoTime();
                return;
            }
        } finally {
            lock.unlock();
        }
        connections.giveBack(connection);
    }

    private void discard() {
        connections.discard(borrowed.pooled());
        borrowed = null;
    }

    /** Gives the kept connection back to the pool if it was not used for {@code idleNanos}; never waits for a run. */
    public void giveBackIfIdle(long idleNanos) {
        if (!lock.tryLock()) {
            return;
        }
        try {
            if (borrowed != null && System.nanoTime() - lastUsed >= idleNanos) {
                connections.giveBack(borrowed);
                borrowed = null;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Gives the kept connection back (or destroys it if a run is stalled on it), and borrows none any more. */
    public void close() {
        closed = true;
        boolean locked;
        try {
            locked = lock.tryLock(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            locked = false;
        }
        if (!locked) {
            return; // a stalled run: its connection is closed by its time limit, or with the pool
        }
        try {
            if (borrowed != null) {
                connections.giveBack(borrowed);
                borrowed = null;
            }
        } finally {
            lock.unlock();
        }
    }
}
