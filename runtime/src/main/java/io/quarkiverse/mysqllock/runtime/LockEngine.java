package io.quarkiverse.mysqllock.runtime;

import java.util.List;
import java.util.Optional;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockMode;

/** What an engine does; the {@link MySqlLockManager} in front of it validates arguments and adds the conveniences. */
public interface LockEngine extends AutoCloseable {

    /**
     * Blocks until the lock is granted or the deadline passes.
     *
     * @param name the name as the application gave it (for messages and handles)
     * @param serverName the normalised name
     * @param waitNanos how long to wait, at least 0
     * @param throwIfBusy whether a lock still busy at the deadline throws (true) or returns null (false)
     * @param reentrant whether the calling thread owns the hold: a thread that acquires a name it holds gets a nested
     *        hold. False for acquisitions made on a worker thread on behalf of an asynchronous caller: the worker is
     *        not the owner, and a later acquisition on the same worker must contend like any other.
     * @param leaseCapNanos LEASE engine: a lease of this length that is not renewed ({@code @Locked(atMostFor)}); 0
     *        for the configured ttl, renewed while held. The NAMED engine has no leases and ignores it.
     * @return the handle, or null if busy and {@code throwIfBusy} is false
     * @throws io.quarkiverse.mysqllock.LockNotAcquiredException for every other failure, and when busy if asked
     */
    ControlledHandle acquire(String name, String serverName, long waitNanos, boolean throwIfBusy, boolean reentrant,
            long leaseCapNanos);

    boolean isLocked(String name, String serverName);

    Optional<LockInfo> inspect(String name, String serverName);

    /** The locks this instance holds now. */
    List<LockInfo> held();

    /**
     * Every holder the server knows of, best effort, named by their server names: this instance's, then the others'.
     */
    List<LockInfo> holders();

    /**
     * Ends the current holder's hold on a name, whoever it is.
     *
     * @return whether there was a holder
     * @throws UnsupportedOperationException if the engine cannot do it safely
     */
    boolean forceRelease(String name, String serverName);

    LockMode mode();

    /**
     * Checks, with a statement or two, that locks can be taken and trusted now: for readiness checks. Never throws.
     */
    EngineHealth health();

    @Override
    void close();
}
