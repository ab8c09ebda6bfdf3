package io.quarkiverse.mysqllock.runtime.engine;

import java.util.List;
import java.util.Optional;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockMode;

/**
 * What an engine does. {@code MySqlLockManager} validates arguments and adds the conveniences; between it and the
 * engine sit {@code MeteredEngine} (when metrics, lock events or spans are on) and, on a database,
 * {@code SelectingEngine} (which chooses NAMED or LEASE), both {@code LockEngine}s that pass the calls on.
 */
public interface LockEngine extends AutoCloseable {

    /**
     * Blocks until the lock is granted or the request's wait ends.
     *
     * @return the handle, or null if busy and the request asked for {@link LockRequest.WhenBusy#NOTHING}
     * @throws io.quarkiverse.mysqllock.LockNotAcquiredException for every other failure, and when busy if asked
     */
    ControlledHandle acquire(LockRequest request);

    boolean isLocked(LockName lock);

    Optional<LockInfo> inspect(LockName lock);

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
    boolean forceRelease(LockName lock);

    LockMode mode();

    /**
     * Checks, with a statement or two, that locks can be taken and trusted now: for readiness checks. Never throws.
     */
    EngineHealth health();

    /** The engine's periodic work (renewals, keepalive checks), for the test kit to pause or run now; null if none. */
    default PeriodicWork periodicWork() {
        return null;
    }

    @Override
    void close();
}
