package io.quarkiverse.mysqllock;

/** A lock was lost while held: its holder must stop relying on it. */
public class LockLostException extends RuntimeException {

    /** How the lock was lost. */
    public enum Reason {
        /** The connection holding the lock failed or was closed (network, server restart, KILL of the session). */
        CONNECTION_LOST,
        /** The server no longer shows this session as the holder. */
        NOT_HELD,
        /** The lease expired before it could be renewed. */
        LEASE_EXPIRED,
        /** The application is shutting down and released every lock. */
        SHUTDOWN
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
