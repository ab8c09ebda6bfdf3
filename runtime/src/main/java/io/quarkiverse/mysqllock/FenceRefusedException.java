package io.quarkiverse.mysqllock;

/**
 * A write was refused by its fence ({@link FenceGuard}, {@link Fenced}): a newer token of the lock was admitted before,
 * so its sender lost the lock; or the request carried no token, or one of another lock; or the database could not check
 * it. With Quarkus REST it is answered 409 Conflict (428 Precondition Required when the token is missing, 400 Bad Request
 * when it is malformed or another lock's, 503 with {@code Retry-After} when the check could not be made), with a JSON
 * body naming the lock and the tokens.
 */
public class FenceRefusedException extends RuntimeException {

    /** Why the fence refused the write. */
    public enum Reason {
        /** A newer token of the lock was admitted before: the sender lost the lock. */
        STALE,
        /** The request carried no token. */
        MISSING,
        /** The request's token is malformed, or of another lock than the one the resource is fenced by. */
        INVALID,
        /**
         * The database could not check it: the check waited longer than the server's lock wait timeout for another
         * request of the lock to commit, was chosen as a deadlock's victim, or lost its connection. Try again.
         */
        UNAVAILABLE
    }

    private final String lockName;
    private final Reason reason;
    private final long token;
    private final long newest;

    public FenceRefusedException(String lockName, Reason reason, long token, long newest, String message,
            Throwable cause) {
        super(message, cause);
        this.lockName = lockName;
        this.reason = reason;
        this.token = token;
        this.newest = newest;
    }

    /** The lock the resource is fenced by. */
    public String lockName() {
        return lockName;
    }

    public Reason reason() {
        return reason;
    }

    /** The refused token; 0 if none was given. */
    public long token() {
        return token;
    }

    /** The newest token of the lock admitted before; 0 if unknown. */
    public long newest() {
        return newest;
    }
}
