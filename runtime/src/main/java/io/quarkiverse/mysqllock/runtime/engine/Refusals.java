package io.quarkiverse.mysqllock.runtime.engine;

import java.sql.SQLException;
import java.time.Duration;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/**
 * How an acquisition is refused for a reason of the lock itself rather than a failed statement, for both engines: busy,
 * a read-only server, a wait the caller's interrupt or the server ended, a deadlock. Stateless; the messages name what
 * the caller can do.
 */
public final class Refusals {

    private Refusals() {
    }

    /**
     * Null (busy, and not asked to throw), or the exception that names the holder.
     *
     * @param unknownHolder what the message calls a holder it cannot name ("another session", "another instance")
     */
    public static ControlledHandle busy(String name, long start, boolean throwIfBusy, String holder,
            String unknownHolder) {
        if (!throwIfBusy) {
            return null;
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        throw new LockNotAcquiredException(name, waited, Reason.BUSY, holder, "Lock '" + name + "' is held by "
                + (holder == null ? unknownHolder : holder) + "; not acquired within " + waited.toMillis() + " ms",
                null);
    }

    public static LockNotAcquiredException readOnly(String name, Duration waited) {
        return new LockNotAcquiredException(name, waited, Reason.READ_ONLY, null, "Lock '" + name + "' was not acquired:"
                + " the lock database is read-only (a replica, or a primary demoted by a failover), and new connections"
                + " still reach a read-only server. Named locks taken there would be invisible to the writable primary",
                null);
    }

    /**
     * A wait that ended interrupted: by the calling thread's interrupt ({@link #callerInterrupted}, reason
     * {@code INTERRUPTED}) if the thread is interrupted now, else by the server ({@code GET_LOCK} returned NULL after a
     * {@code KILL QUERY} someone else sent).
     */
    public static LockNotAcquiredException interrupted(String name, Duration waited) {
        if (Thread.currentThread().isInterrupted()) {
            return callerInterrupted(name, waited, null);
        }
        return new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null, "Lock '" + name
                + "' was not acquired: the server interrupted the wait (GET_LOCK returned NULL, as after KILL QUERY)",
                null);
    }

    /**
     * The calling thread was interrupted while it waited, or before: reason {@code INTERRUPTED}. The caller keeps the
     * thread's interrupt status set.
     *
     * @param cause what the interrupt ended (an {@link InterruptedException} is made if null)
     */
    public static LockNotAcquiredException callerInterrupted(String name, Duration waited, Throwable cause) {
        return new LockNotAcquiredException(name, waited, Reason.INTERRUPTED, null, "Lock '" + name
                + "' was not acquired: the calling thread was interrupted while it waited (its interrupt status is kept)",
                cause != null ? cause : new InterruptedException("Interrupted while waiting for lock '" + name + "'"));
    }

    public static LockNotAcquiredException deadlock(String name, Duration waited, String detectedBy, SQLException e) {
        return new LockNotAcquiredException(name, waited, Reason.DEADLOCK, null, "Lock '" + name + "' was not acquired: "
                + detectedBy + ". This thread holds other locks and the holder of '" + name + "' waits for one of them."
                + " Acquire locks in one global order, or release and retry" + (e == null ? "" : ": " + SqlErrors.describe(e)),
                e);
    }
}
