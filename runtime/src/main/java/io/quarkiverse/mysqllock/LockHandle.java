package io.quarkiverse.mysqllock;

import java.util.List;
import java.util.function.Consumer;

/**
 * A held lock. Release it exactly as you would close a resource: {@code try (LockHandle h = locks.acquire("x")) {...}}.
 * <p>
 * A handle is not bound to a thread: it may be released, queried and listened to from any thread. Once another thread
 * than the one that acquired it uses it, it is that thread's: the thread that acquired it no longer nests onto it when
 * it acquires the same name again, and contends for it like any other.
 */
public interface LockHandle extends AutoCloseable {

    /** The name the lock was requested with. */
    String name();

    /**
     * A number that strictly increases for each successive holder of this name, across every process and
     * restart. Pass it to the resource the lock protects and have it reject writes whose token is not greater than
     * the last one it accepted: that keeps a paused or partitioned former holder from doing damage.
     * <p>
     * NAMED engine: the token is obtained from the database on the first call (one statement) and cached, so callers
     * that never ask pay nothing; that first call must not happen on an event-loop thread. LEASE engine: the token is
     * known from the acquisition and costs nothing.
     *
     * @throws LockLostException if the lock is no longer held when the token is first requested
     */
    long fencingToken();

    /**
     * The locks this handle holds, each with its own name and fencing token: several for a handle of
     * {@link LockManager#acquireAll}, this handle itself otherwise.
     */
    default List<LockHandle> parts() {
        return List.of(this);
    }

    /** False once the lock was released or lost. */
    boolean isValid();

    /**
     * Registers a listener called once, from any thread, when the lock is lost (not when it is released). If the
     * lock is already lost the listener is called at once, on the calling thread.
     */
    LockHandle onLost(Consumer<LockLostException> listener);

    /** Releases the lock. Idempotent; callable from any thread. */
    void release();

    /** Same as {@link #release()}. */
    @Override
    void close();
}
