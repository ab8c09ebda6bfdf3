package io.quarkiverse.mysqllock;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.mutiny.Uni;

/**
 * Many readers or one writer of one name, across every instance ({@link LockManager#readWriteLock}); writers are not
 * starved by a stream of readers.
 * <p>
 * Built from exclusive locks, since {@code GET_LOCK} has no shared mode: a gate {@code <name>#rw-gate} and
 * {@link #maxReaders()} read permits {@code <name>#rw-read#permit-<i>} ({@value #DEFAULT_MAX_READERS} unless raised).
 * A reader passes the gate (holds it only while it takes a read permit) and keeps its permit; a writer takes the gate
 * and keeps it, then every read permit, waiting for the readers inside to leave. Once a writer holds the gate no new
 * reader enters, so readers cannot starve it. Cost: a read is three lock statements, a read of the lock table, a check
 * that the gate was held all along and a release; a write is {@code maxReaders() + 1} locks taken and released.
 * <p>
 * Fencing: a writer's {@link LockHandle#fencingToken()} is the gate's, strictly increasing from one writer to the next;
 * a reader's is its read permit's (increasing per permit). A thread holding the read lock that asks for the write lock
 * waits for itself and gets {@code BUSY} at the end of its wait: there is no upgrade. The names ending in
 * {@code #rw-gate} and {@code #rw-read#permit-<i>} belong to the read-write lock: do not take them otherwise.
 */
public interface DistributedReadWriteLock {

    /** How many readers may hold a read-write lock at once until {@link #raiseMaxReaders(int)} raises it. */
    int DEFAULT_MAX_READERS = 16;

    /**
     * The former fixed number of readers.
     *
     * @deprecated the number is the lock's own, {@link #maxReaders()}; it starts at {@link #DEFAULT_MAX_READERS}
     */
    @Deprecated
    int MAX_READERS = DEFAULT_MAX_READERS;

    /**
     * How many readers may hold it at once: one number for the whole fleet, stored in the lock table (a reserved row,
     * {@code ~readers:<name>}, apart from every semaphore's), {@value #DEFAULT_MAX_READERS} until raised. A writer
     * takes every read permit, so the instances must never count different numbers: each reads it at each acquisition,
     * under the gate, and a reader counts as inside only once it found it held the gate all along.
     */
    int maxReaders();

    /**
     * Raises the number of readers for the whole fleet, at most {@value DistributedSemaphore#MAX_PERMITS}: the next
     * reader or writer of every instance uses it. It can never be lowered: a writer would then take fewer read permits
     * than a reader inside may hold. Raise it only once every instance runs a version of the extension that reads the
     * stored number (older ones count {@value #DEFAULT_MAX_READERS} readers, and their writers would take only those).
     *
     * @throws IllegalArgumentException if {@code readers} is lower than {@link #maxReaders()} or above
     *         {@value DistributedSemaphore#MAX_PERMITS}
     */
    void raiseMaxReaders(int readers);

    /** The lock's name. */
    String name();

    /**
     * The read lock, waiting up to {@code wait} for a writer to leave and for a free read permit.
     *
     * @throws LockNotAcquiredException with reason {@code BUSY} if it could not be had when the wait ends, or as
     *         {@link LockManager#acquire(String, Duration)}
     */
    LockHandle acquireRead(Duration wait);

    /** As {@link #acquireRead(Duration)}: empty if it could not be had when the wait ends. */
    Optional<LockHandle> tryAcquireRead(Duration wait);

    /**
     * The write lock, waiting up to {@code wait} in all for the gate and for every reader to leave. Its handle's
     * {@link LockHandle#parts()} are the gate and the read permits.
     *
     * @throws LockNotAcquiredException with reason {@code BUSY} if it could not be had when the wait ends, or as
     *         {@link LockManager#acquire(String, Duration)}; nothing is then held
     */
    LockHandle acquireWrite(Duration wait);

    /** As {@link #acquireWrite(Duration)}: empty if it could not be had when the wait ends. */
    Optional<LockHandle> tryAcquireWrite(Duration wait);

    /**
     * {@link #acquireRead(Duration)} without blocking the calling thread, as
     * {@link LockManager#acquireAsync(String, Duration)}: taken on a worker thread at subscription, delivered on the
     * subscriber's Vert.x context, given back if the subscription is cancelled.
     */
    Uni<LockHandle> acquireReadAsync(Duration wait);

    /** {@link #acquireWrite(Duration)} without blocking the calling thread, as {@link #acquireReadAsync(Duration)}. */
    Uni<LockHandle> acquireWriteAsync(Duration wait);
}
