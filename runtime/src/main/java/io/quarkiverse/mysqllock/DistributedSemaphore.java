package io.quarkiverse.mysqllock;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.mutiny.Uni;

/**
 * At most {@link #permits()} holders at once, across every instance, of one name ({@link LockManager#semaphore}).
 * <p>
 * Each permit is a lock of its own, named {@code <name>#permit-<i>}: the handle of a permit is that lock's handle, with
 * its own {@linkplain LockHandle#fencingToken() fencing token} (strictly increasing from one holder of that permit to
 * the next), loss notification and release. A crashed holder's permit comes back as its lock does: NAMED, when its
 * server session ends; LEASE, when its lease ends.
 * <p>
 * The number of permits is the fleet's, one for every instance: the first use of the name anywhere (an acquisition,
 * {@link #permits()}, {@link #availablePermits()}) stores the number its caller asked for in the lock table (a reserved
 * row, {@code ~permits:<name>}), and every acquisition on every instance reads it there. An instance asking for another number
 * gets the stored one (and a warning in its log, once);
 * {@link #changePermits(int)} changes it deliberately.
 * <p>
 * Waiting: one attempt at every permit, starting at a random one, then a wait on one permit (NAMED: on the server,
 * woken as soon as it is released; LEASE: the engine's polling) for a pause that grows from 20 ms to 500 ms, then
 * again. A permit given back while another is watched is found within that pause. A thread that holds a permit and
 * asks again gets another permit, not a nested hold.
 */
public interface DistributedSemaphore {

    /** The largest number of permits of one semaphore. */
    int MAX_PERMITS = 1024;

    /** The semaphore's name. */
    String name();

    /**
     * How many holders it admits at once: the fleet's number, read from the lock table (stored first if it is not yet).
     *
     * @throws IllegalStateException if it cannot be read, or on an event-loop thread
     */
    int permits();

    /**
     * Stores a new number of permits for the whole fleet: every instance's next acquisition uses it. More permits are
     * usable at once; with fewer, a permit held above the new number stays held (and valid) until it is released, so
     * until then its holder is one more beside the new number's. Change it only once every instance runs a version of
     * the extension that reads the stored number (older ones use the number they ask for).
     *
     * @throws IllegalArgumentException if {@code permits} is not between 1 and {@value #MAX_PERMITS}
     */
    void changePermits(int permits);

    /**
     * A permit, waiting up to {@code wait} ({@link Duration#ZERO}: one attempt at each permit).
     *
     * @throws LockNotAcquiredException with reason {@code BUSY} if every permit is still held when the wait ends, or as
     *         {@link LockManager#acquire(String, Duration)}
     */
    LockHandle acquire(Duration wait);

    /** As {@link #acquire(Duration)}: empty if every permit is still held when the wait ends. */
    Optional<LockHandle> tryAcquire(Duration wait);

    /**
     * {@code count} permits at once, all or none, waiting up to {@code wait}: one handle that holds them all (valid
     * while each is, released together; each permit's fencing token is one of its {@link LockHandle#parts()}). No permit
     * is kept while waiting for the others, so callers asking for several never deadlock each other; a caller asking for
     * many may wait longer than callers asking for one while permits are scarce.
     *
     * @throws IllegalArgumentException if {@code count} is not between 1 and {@link #permits()}
     * @throws LockNotAcquiredException with reason {@code BUSY} if {@code count} permits were never free at once within
     *         the wait, or as {@link LockManager#acquire(String, Duration)}
     */
    LockHandle acquire(int count, Duration wait);

    /** As {@link #acquire(int, Duration)}: empty if {@code count} permits were never free at once within the wait. */
    Optional<LockHandle> tryAcquire(int count, Duration wait);

    /**
     * {@link #acquire(Duration)} without blocking the calling thread, as {@link LockManager#acquireAsync(String, Duration)}:
     * the permit is taken on a worker thread at subscription and delivered on the subscriber's Vert.x context; a
     * cancellation gives back a permit granted later, one whose delivery it overtook, or one delivered already.
     */
    Uni<LockHandle> acquireAsync(Duration wait);

    /**
     * {@link #acquire(int, Duration)} without blocking the calling thread, as {@link #acquireAsync(Duration)}. A
     * {@code count} outside 1 to {@value #MAX_PERMITS} is refused at once; one above the fleet's number fails the
     * {@code Uni} with {@code IllegalArgumentException} (the number is read off the calling thread).
     */
    Uni<LockHandle> acquireAsync(int count, Duration wait);

    /** How many permits nobody holds now, in any instance: a snapshot, one statement per permit. */
    int availablePermits();
}
