package io.quarkiverse.mysqllock;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;

/**
 * A held lock. Release it exactly as you would close a resource: {@code try (LockHandle h = locks.acquire("x")) {...}}.
 * <p>
 * A handle is not bound to a thread: it may be released, queried and listened to from any thread. Once another thread
 * than the one that acquired it uses it, it is that thread's: the thread that acquired it no longer nests onto it when
 * it acquires the same name again, and contends for it like any other.
 * <p>
 * Keep the handle for as long as you hold the lock: a handle garbage-collected while held is a leak, which the
 * extension logs (with the code that took it) and releases. A lock meant to be held until the application stops is
 * kept in a field.
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
     * @throws IllegalStateException NAMED engine: if no token could be issued (the database is unreachable, or
     *         read-only during a failover); the lock is still held, and a later call may succeed
     */
    long fencingToken();

    /**
     * {@link #fencingToken()} without blocking the calling thread: the token is read on a worker thread (NAMED: one
     * statement the first time) and delivered there. For code on an event loop, where {@link #fencingToken()} must not
     * be called.
     */
    default Uni<Long> fencingTokenAsync() {
        return Uni.createFrom().item(this::fencingToken).runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }

    /**
     * The locks this handle holds, each with its own name and fencing token: several for a handle of
     * {@link LockManager#acquireAll}, this handle itself otherwise.
     */
    default List<LockHandle> parts() {
        return List.of(this);
    }

    /**
     * Moves the end of this hold's lease to {@code atMostFor} from now, on the database server: for a lock taken with
     * {@link LockOptions#holdingAtMost} (or {@code @Locked(atMostFor)}) by a job that learns it needs longer, or that
     * is done sooner (the end may move either way). It is ShedLock's {@code SimpleLock.extend}: if the holder dies
     * after extending, the lock stays taken until the new end.
     * <p>
     * Only a hold capped with {@code atMostFor} has an end to move: on LEASE the lease's end on the server (one
     * statement), on NAMED the moment the holder's process releases it. A lock without a cap ends when it is released
     * (or, NAMED, when its holder's session ends; LEASE: renewed while held): for it this only checks that the lock is
     * still held.
     *
     * @param atMostFor the new length of the lease, from now; at least {@link LockOptions#MIN_AT_MOST_FOR}, at most
     *        {@link LockOptions#MAX_AT_MOST_FOR}
     * @return true if the hold now ends {@code atMostFor} from now (or, without a lease end, is still held); false if
     *         the database did not answer: the server may or may not have moved the end, so the holder counts the earlier
     *         of the former end and the new one (and is told through {@link #onLost} when that comes)
     * @throws IllegalArgumentException if {@code atMostFor} is null, shorter than {@link LockOptions#MIN_AT_MOST_FOR} or
     *         longer than {@link LockOptions#MAX_AT_MOST_FOR},
     *         or on LEASE no longer than the part of a lease its holder gives up before its end (the loss margin: a
     *         tenth of the ttl, at most 250 ms)
     * @throws IllegalStateException if this handle was released
     * @throws LockLostException if the lock is lost (ended, or taken over): it was not extended. On NAMED (and
     *         in-memory) a hold whose {@code atMostFor} cap has come and whose end has begun is lost too (reason
     *         {@code LEASE_EXPIRED}): the extension and that end are decided in one step, so a true answer means the
     *         lock is held until the new end
     */
    default boolean extend(Duration atMostFor) {
        LockOptions.leaseLength("Lock '" + name() + "': the new length of its lease", atMostFor);
        if (!isValid()) {
            throw new IllegalStateException("Lock '" + name() + "' is no longer held: it cannot be extended");
        }
        return true;
    }

    /**
     * False once the lock was released or lost. A false answer is final, on an event-loop thread too (where this never
     * runs a statement): a lock it finds lost has its {@link #onLost} listeners told and, on NAMED, is freed on the
     * server (or being freed); it never turns true again.
     */
    boolean isValid();

    /**
     * Registers a listener called once, from any thread, when the lock is lost (not when it is released). If the
     * lock is already lost the listener is called at once, on the calling thread. A handle released before the loss no
     * longer hears of it (a loss its own release finds excepted), even if the lock lives on in another, nested, hold.
     */
    LockHandle onLost(Consumer<LockLostException> listener);

    /** Releases the lock. Idempotent; callable from any thread. */
    void release();

    /** Same as {@link #release()}. */
    @Override
    void close();
}
