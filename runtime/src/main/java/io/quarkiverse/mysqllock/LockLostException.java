package io.quarkiverse.mysqllock;

/** A lock was lost while held: its holder must stop relying on it. */
public class LockLostException extends RuntimeException {

    /** How the lock was lost. */
    public enum Reason {
        /** The connection holding the lock failed or was closed (network, server restart, KILL of the session). */
        CONNECTION_LOST,
        /** The server no longer shows this session as the holder. */
        NOT_HELD,
        /**
         * The lease expired before it could be renewed, or the hold reached its {@code atMostFor} cap (on either engine:
         * a NAMED lock is released by its holder's process at the cap).
         */
        LEASE_EXPIRED,
        /** The application is shutting down and released every lock. */
        SHUTDOWN,
        /**
         * The server holding the lock became read-only (a primary demoted by a failover, while its clients still reach
         * it): the lock is invisible to the writable server, where another instance may take it.
         */
        READ_ONLY,
        /**
         * This instance could not confirm in time that its fleet still uses its engine (it was paused, or its
         * membership's renewals failed for about as long as a membership lasts, the longer of the lease ttl and three
         * keepalive intervals): the fleet may have moved to the other engine, whose locks do not exclude this one's.
         */
        MEMBERSHIP_LOST,
        /**
         * The {@code acquireAsync} subscription was cancelled after its handle was delivered: the lock was released,
         * since an operator racing the delivery with a cancellation (a time-out firing as the handle arrives) drops the
         * handle, and this is how a subscriber that kept it learns it. Also a {@code @Locked} method's {@code Uni}
         * cancelled once the method was called, or a Kotlin {@code suspend} call ended by its caller's cancellation:
         * the cancellation ends the lock, and work that ignored it runs on without the lock.
         */
        CANCELLED
    }

    private final String lockName;
    private final Reason reason;

    public LockLostException(String lockName, Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.lockName = lockName;
        this.reason = reason;
    }

    /** The lock name as requested. */
    public String lockName() {
        return lockName;
    }

    /** How the lock was lost. */
    public Reason reason() {
        return reason;
    }
}
