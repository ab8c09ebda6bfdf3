package io.quarkiverse.mysqllock;

import java.time.Duration;
import java.util.Optional;

/**
 * Many readers or one writer of one name, across every instance ({@link LockManager#readWriteLock}); writers are not
 * starved by a stream of readers.
 * <p>
 * Built from exclusive locks, since {@code GET_LOCK} has no shared mode: a gate {@code <name>#rw-gate} and
 * {@link #maxReaders()} read permits {@code <name>#rw-read#permit-<i>}. A reader passes the gate (holds it only while it
 * takes a read permit) and keeps its permit; a writer takes the gate and keeps it, then every read permit, waiting for
 * the readers inside to leave. Once a writer holds the gate no new reader enters, so readers cannot starve it. Cost: a
 * read is three lock statements and a release one; a write is {@code maxReaders + 1} locks taken and released. Every
 * instance must use the same {@code maxReaders}.
 * <p>
 * Fencing: a writer's {@link LockHandle#fencingToken()} is the gate's, strictly increasing from one writer to the next;
 * a reader's is its read permit's (increasing per permit). A thread holding the read lock that asks for the write lock
 * waits for itself and gets {@code BUSY} at the end of its wait: there is no upgrade.
 */
public interface DistributedReadWriteLock {

    /** The read permits when none is given. */
    int DEFAULT_MAX_READERS = 16;

    /** The lock's name. */
    String name();

    /** How many readers may hold it at once. */
    int maxReaders();

    /**
     * The read lock, waiting up to {@code wait} for a writer to leave and for a free read permit.
     *
     * @throws LockNotAcquiredException with reason {@code BUSY} if it could not be had when the wait ends
     */
    LockHandle acquireRead(Duration wait);

    /** As {@link #acquireRead(Duration)}: empty if it could not be had when the wait ends. */
    Optional<LockHandle> tryAcquireRead(Duration wait);

    /**
     * The write lock, waiting up to {@code wait} in all for the gate and for every reader to leave. Its handle's
     * {@link LockHandle#parts()} are the gate and the read permits.
     *
     * @throws LockNotAcquiredException with reason {@code BUSY} if it could not be had when the wait ends; nothing is
     *         then held
     */
    LockHandle acquireWrite(Duration wait);

    /** As {@link #acquireWrite(Duration)}: empty if it could not be had when the wait ends. */
    Optional<LockHandle> tryAcquireWrite(Duration wait);
}
