package io.quarkiverse.mysqllock.runtime.lease;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.locks.ReentrantLock;

import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/**
 * A pooled connection kept for a run of batches: borrowing one from the pool for every statement costs two thread
 * hand-offs (borrows run on borrower threads, outside the caller's transaction), more than the statement itself on a
 * loaded machine. One batch at a time uses it (its combiner's leader), and it goes back to the pool once idle for a
 * moment; a connection that failed (or reached a read-only server) is destroyed, and the next batch borrows another.
 */
final class BatchConnection {

    /** Work on the connection. */
    @FunctionalInterface
    interface Work<T> {
        T run(Connection raw) throws SQLException;
    }

    private final ConnectionSource connections;
    private final String purpose;
    /** Guards {@link #borrowed} and {@link #lastUsed}. */
    private final ReentrantLock lock = new ReentrantLock();
    private ConnectionSource.Borrowed borrowed;
    private long lastUsed;
    /** Set at shutdown: no connection is borrowed any more. Guarded by {@link #lock}. */
    private boolean closed;

    BatchConnection(ConnectionSource connections, String purpose) {
        this.connections = connections;
        this.purpose = purpose;
    }

    /**
     * Runs the work on the kept connection, borrowing one first if none is kept; destroys it if the connection failed.
     *
     * @throws IllegalStateException after {@link #close()}
     */
    <T> T run(Work<T> work) throws SQLException {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("The lock manager is shut down");
            }
            if (borrowed == null) {
                borrowed = connections.borrowForStatements(purpose, 0);
                lastUsed = System.nanoTime();
            }
            try {
                T result = work.run(borrowed.raw());
                lastUsed = System.nanoTime();
                return result;
            } catch (SQLException e) {
                // an error of the statement alone (a row lock, a deadlock) leaves the connection as good as before
                if (SqlErrors.isConnectionFailure(e) || SqlErrors.isReadOnly(e)) {
                    connections.discard(borrowed.pooled());
                    borrowed = null;
                }
                throw e;
            } catch (RuntimeException | Error e) {
                connections.discard(borrowed.pooled()); // in an unknown state (a transaction open?): never back to the pool
                borrowed = null;
                throw e;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Gives the kept connection back to the pool if it was not used for {@code idleNanos}; never waits for a batch. */
    void giveBackIfIdle(long idleNanos) {
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

    /** Gives the kept connection back, and borrows none any more (shutdown). */
    void close() {
        lock.lock();
        try {
            closed = true;
            if (borrowed != null) {
                connections.giveBack(borrowed);
                borrowed = null;
            }
        } finally {
            lock.unlock();
        }
    }
}
