package io.quarkiverse.mysqllock;

import java.time.Duration;
import java.util.Optional;

/**
 * The lock could not be acquired: it stayed busy for the whole wait, the server reported a deadlock, no connection, or
 * the calling thread was interrupted while it waited.
 */
public class LockNotAcquiredException extends RuntimeException {

    /** Why the acquisition failed. */
    public enum Reason {
        /** Someone else held the lock for the whole wait. */
        BUSY,
        /** The server chose this request as the victim of a deadlock between lock holders. */
        DEADLOCK,
        /** No database connection could be borrowed in time (pool exhausted). */
        POOL_EXHAUSTED,
        /** The database could not be reached or answered with an error. */
        DATABASE_ERROR,
        /**
         * The lock database refused a write as read-only: the datasource reaches a replica, or a primary that a failover
         * demoted, even through new connections.
         */
        READ_ONLY,
        /**
         * The calling thread was interrupted while it waited (or before it began to): the wait ended within about
         * 100 ms of the interrupt, on either engine (NAMED ends its {@code GET_LOCK} on the server, with a
         * {@code KILL QUERY} sent from a pooled connection: with the pool exhausted, once one frees up), and nothing is
         * held. The thread's interrupt status is kept; the cause is an {@link InterruptedException}.
         */
        INTERRUPTED
    }

    private final String lockName;
    private final Duration waited;
    private final String holder;
    private final Reason reason;

    public LockNotAcquiredException(String lockName, Duration waited, Reason reason, String holder, String message,
            Throwable cause) {
        super(message, cause);
        this.lockName = lockName;
        this.waited = waited;
        this.reason = reason;
        this.holder = holder;
    }

    /** The lock name as requested. */
    public String lockName() {
        return lockName;
    }

    /** How long the acquisition waited. */
    public Duration waited() {
        return waited;
    }

    /** Why it failed. */
    public Reason reason() {
        return reason;
    }

    /** The current holder, when it is known. */
    public Optional<String> holder() {
        return Optional.ofNullable(holder);
    }
}
