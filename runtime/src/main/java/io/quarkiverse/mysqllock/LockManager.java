package io.quarkiverse.mysqllock;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

import io.smallrye.mutiny.Uni;

/**
 * Distributed locks kept in the application's MySQL or MariaDB database.
 * <p>
 * Inject it anywhere: {@code @Inject LockManager locks;}. Every method validates its arguments first: a {@code null} or
 * blank name, a name that begins with {@code tick@} (reserved: the lock table's rows of scheduled jobs' ticks are
 * named {@code tick@<lock name>}), or a negative or {@code null} wait, throws {@link IllegalArgumentException} before
 * anything reaches the database. Blocking methods must not be called on an event-loop thread; use
 * {@link #acquireAsync(String, Duration)} there.
 * <p>
 * Lock names are case-sensitive on every server (see the guide, engines page, "Lock names").
 */
public interface LockManager {

    /**
     * Acquires the lock, waiting up to {@code quarkus.mysql-lock.default-wait}: {@code 0s} unless set, so one attempt.
     * Unlike {@code Lock.lock()}, it never waits without bound (a waiting thread keeps its worker, and on NAMED a pooled
     * connection): ask for a wait with {@link #acquire(String, Duration)}, or block with {@link #asLock(String)}.
     *
     * @throws LockNotAcquiredException if the lock is still held by someone else when the wait ends, the server
     *         reported a deadlock, or no database connection could be had; with reason {@code INTERRUPTED} if the
     *         calling thread is interrupted while it waits (the wait ends within about 100 ms, on either engine, and
     *         the thread's interrupt status is kept)
     */
    LockHandle acquire(String name);

    /**
     * Acquires the lock, waiting up to {@code wait}. {@link Duration#ZERO} makes one attempt.
     *
     * @throws LockNotAcquiredException as {@link #acquire(String)}
     */
    LockHandle acquire(String name, Duration wait);

    /**
     * Acquires the lock as {@code options} say: how long to wait ({@link LockOptions#defaults()}: up to
     * {@code quarkus.mysql-lock.default-wait}), how long the hold lasts at least after its release is asked for, and
     * how long a lease lasts at most; what {@code @Locked(waitFor, atLeastFor, atMostFor)} does for a method.
     *
     * @throws IllegalArgumentException if {@code options} is null
     * @throws LockNotAcquiredException as {@link #acquire(String)}
     */
    LockHandle acquire(String name, LockOptions options);

    /**
     * As {@link #acquire(String, LockOptions)}: empty if the lock is still held by someone else when the wait ends. The
     * options' wait applies ({@link LockOptions#defaults()}: {@code default-wait}); {@code waitingUpTo(Duration.ZERO)}
     * makes one attempt, as {@link #tryAcquire(String)} does.
     */
    Optional<LockHandle> tryAcquire(String name, LockOptions options);

    /** As {@link #acquire(String, LockOptions)}, without blocking: as {@link #acquireAsync(String, Duration)}. */
    Uni<LockHandle> acquireAsync(String name, LockOptions options);

    /**
     * Acquires several locks as one, all or none, waiting up to {@code wait} in all: one after the other in one global
     * order (their names on the server), so that callers asking for overlapping sets, in any order, in any process,
     * never wait for each other in a cycle. A lock still busy when the wait ends gives back those taken so far. The
     * handle releases them all together; {@link LockHandle#parts()} gives each lock with its own fencing token, and
     * {@link LockHandle#onLost} is told of the first one lost. A name given twice is taken once. A name the calling
     * thread already holds is nested onto, as by {@link #acquire(String, Duration)}: the order then no longer protects
     * against waits in a cycle, so take all the names of a set with one call.
     *
     * @throws IllegalArgumentException if {@code names} is null or empty, or holds an invalid name
     * @throws LockNotAcquiredException for the first lock that could not be acquired; none is then held
     */
    LockHandle acquireAll(Collection<String> names, Duration wait);

    /**
     * The semaphore of this name with {@code permits} permits: at most that many holders at once, across every
     * instance; see {@link DistributedSemaphore}. Cheap: the object holds no resource until a permit is acquired. The
     * number of permits is the fleet's: stored by the first acquisition of the name, and read by every acquisition
     * ({@link DistributedSemaphore#changePermits(int)} changes it).
     *
     * @throws IllegalArgumentException if the name is invalid or {@code permits} is not between 1 and
     *         {@value DistributedSemaphore#MAX_PERMITS}
     */
    DistributedSemaphore semaphore(String name, int permits);

    /**
     * The read-write lock of this name: many readers (at most {@link DistributedReadWriteLock#maxReaders()} at once,
     * {@value DistributedReadWriteLock#DEFAULT_MAX_READERS} unless raised) or one writer, across every instance; see
     * {@link DistributedReadWriteLock}.
     *
     * @throws IllegalArgumentException if the name is invalid
     */
    DistributedReadWriteLock readWriteLock(String name);

    /**
     * The election of a leader for {@code role}; this instance takes part once it {@linkplain LeaderElection#join()
     * joins}. One object per role and manager: every call with the same role returns it.
     *
     * @throws IllegalArgumentException if the role is not a valid lock name
     */
    LeaderElection election(String role);

    /**
     * The lock of the innermost {@code @Locked} method running on the calling thread, taken through this manager: to
     * read its fencing token, {@link LockHandle#extend extend} it or check {@link LockHandle#isValid()} from inside the
     * method, or from code it calls (a {@code @Scheduled} method, whose parameters the scheduler decides, has no other
     * way; other methods may declare a {@code LockHandle} parameter instead). Empty outside such a method. Its
     * {@code release()} is refused: the interceptor releases it when the method ends. For a {@code Uni} or
     * {@code CompletionStage} method, only while the method itself runs, not the pipeline it returns.
     */
    Optional<LockHandle> currentLock();

    /** One attempt, no wait: the handle if the lock was free, empty if someone else holds it. */
    default Optional<LockHandle> tryAcquire(String name) {
        return tryAcquire(name, Duration.ZERO);
    }

    /**
     * Waits up to {@code wait}: the handle, or empty if the lock is still held by someone else when the wait ends.
     *
     * @throws LockNotAcquiredException as {@link #acquire(String)}, for every reason but a busy lock: an interrupt of
     *         the waiting thread, for one, throws (reason {@code INTERRUPTED}) rather than answering empty
     */
    Optional<LockHandle> tryAcquire(String name, Duration wait);

    /**
     * Runs {@code action} while holding the lock and releases it afterwards, whatever happens.
     * <p>
     * Exceptions thrown by the action propagate: unchecked ones unchanged, checked ones wrapped in a
     * {@link java.util.concurrent.CompletionException} whose cause is the original. If the lock was lost while the
     * action ran, {@link LockLostException} is thrown after the action returns (an exception of the action takes
     * precedence and carries the loss as a suppressed exception).
     *
     * @throws LockNotAcquiredException if the lock could not be acquired within {@code wait}; the action did not run
     */
    <T> T withLock(String name, Duration wait, Callable<T> action);

    /**
     * The {@code Uni} counterpart of {@link #withLock(String, Duration, Callable)}: at subscription, acquires the lock
     * without blocking (as {@link #acquireAsync(String, Duration)}), then subscribes to the {@code Uni} the action
     * returns, and releases the lock on every outcome before passing it on: an item, a failure, a cancellation at any
     * point (while the lock is awaited, the grant is given back when it comes), or an exception thrown by the action
     * itself. Each subscription takes the lock anew. If the lock was lost while the action's {@code Uni} ran, the result
     * fails with {@link LockLostException} (a failure of the action takes precedence and carries the loss as a
     * suppressed exception). Fails with {@link LockNotAcquiredException} if the lock could not be had within
     * {@code wait}; the action was not called.
     *
     * @throws IllegalArgumentException at once, if the name, the wait or the action is invalid
     */
    <T> Uni<T> withLockAsync(String name, Duration wait, Supplier<Uni<T>> action);

    /** As {@link #withLock(String, Duration, Callable)} for an action without a result. */
    default void withLock(String name, Duration wait, Runnable action) {
        withLock(name, wait, callable("withLock", action));
    }

    /**
     * Runs {@code action} under the lock if it is free now (one attempt, no wait), and says whether it ran: the
     * replacement of {@code tryAcquire(name).ifPresent(lock -> { try (lock) { ... } })} that also gives the result.
     * While it runs, as {@link #withLock(String, Duration, Callable)}: the lock is released whatever happens, the
     * action's exceptions propagate, and a lock lost meanwhile is thrown as {@link LockLostException} after it returns.
     *
     * @return {@link LockedRun#ran()} with the action's result, or not run if someone else held the lock
     * @throws LockNotAcquiredException if the lock could not be asked for (no connection, a database error), or the
     *         calling thread was interrupted while it waited (reason {@code INTERRUPTED})
     */
    default <T> LockedRun<T> tryWithLock(String name, Callable<T> action) {
        return tryWithLock(name, Duration.ZERO, action);
    }

    /** As {@link #tryWithLock(String, Callable)}, waiting up to {@code wait} for the lock. */
    <T> LockedRun<T> tryWithLock(String name, Duration wait, Callable<T> action);

    /** As {@link #tryWithLock(String, Callable)} for an action without a result. */
    default LockedRun<Void> tryWithLock(String name, Runnable action) {
        return tryWithLock(name, Duration.ZERO, callable("tryWithLock", action));
    }

    /** A runnable as a callable without a result; null refused, naming the method. */
    private static Callable<Void> callable(String method, Runnable action) {
        if (action == null) {
            throw new IllegalArgumentException(method + " action must not be null");
        }
        return () -> {
            action.run();
            return null;
        };
    }

    /**
     * The lock {@code name} as a {@link java.util.concurrent.locks.Lock}, for code written against that interface:
     * {@code lock()} waits as long as it takes (an interrupt does not end it, as the contract says),
     * {@code lockInterruptibly()} and {@code tryLock(time, unit)} end on an interrupt with
     * {@link InterruptedException}, within about 100 ms on either engine (a NAMED wait inside the server's
     * {@code GET_LOCK} is ended on the server), {@code tryLock()} makes one attempt. Every view of one name shares the
     * calling thread's holds: a lock taken through one is given back through another. A thread that holds it may take it again
     * (each {@code lock()} needs its {@code unlock()}); {@code unlock()} on a thread that does not hold it throws
     * {@link IllegalMonitorStateException}, and one whose lock was lost meanwhile releases it and throws
     * {@link LockLostException}: a lost lock is never silent. {@code newCondition()} is not supported. It has no
     * fencing token: take a {@link LockHandle} where the protected resource checks one.
     */
    java.util.concurrent.locks.Lock asLock(String name);

    /**
     * Acquires the lock without blocking the calling thread: the database work runs on a worker thread and the
     * result is delivered on the caller's Vert.x context when there is one. The lock is requested at subscription.
     * Cancelling the subscription releases the lock: one granted later when it comes, one granted while its delivery
     * waited for a busy event loop instead of delivering it. A cancellation after the delivery releases it too, and
     * reports it lost with reason {@link LockLostException.Reason#CANCELLED}: a time-out firing as the handle arrives
     * makes Mutiny drop the handle, and nothing says whether it went on, so a subscriber that kept it is told.
     * Cancelling the pipeline ends its lock, as for a {@code @Locked} method's {@code Uni}. Fails with
     * {@link LockNotAcquiredException} as {@link #acquire(String, Duration)}.
     */
    Uni<LockHandle> acquireAsync(String name, Duration wait);

    /** Whether anyone, in this or any other process, holds the lock now. */
    boolean isLocked(String name);

    /**
     * Who holds the lock now, if anyone. For a lock held by this instance every field is exact; for a holder in
     * another process the holder is its server connection and {@code since} and {@code fencingToken} are unknown
     * (null and 0).
     */
    Optional<LockInfo> inspect(String name);

    /**
     * The engine in use. When the database did not answer as the application started, the engine is chosen at first
     * use: until then this asks the database, and throws as {@link #isLocked(String)} does when it does not answer.
     */
    LockMode mode();

    /** The locks this instance holds now; answered from memory, without a statement. */
    List<LockInfo> held();

    /**
     * Every holder of a lock the database knows of now, this instance's included. LEASE: the unexpired rows of the lock
     * table. NAMED, best effort: the server's lock tables when it has them ({@code performance_schema.metadata_locks}
     * on MySQL, {@code information_schema.METADATA_LOCK_INFO} where MariaDB's {@code metadata_lock_info} plugin is
     * installed), else the names the lock table knows (those that were ever given a fencing token), each checked with
     * {@code IS_USED_LOCK}. Other processes' named locks show their server connection only. Names are returned as
     * the application gave them, without the namespace; a name the server knows only by its hash is returned hashed.
     * With a namespace, only its locks are listed.
     */
    List<LockInfo> holders();

    /**
     * LEASE engine: ends the current lease on a name, whoever holds it, so that the next acquisition succeeds at once.
     * Dangerous: the holder may still be working, and learns of it only at its next renewal or release (it is then told
     * through {@code onLost}, reason {@code NOT_HELD}). Fencing keeps it safe where the protected resource checks tokens:
     * the next holder's token is greater, so the former holder's writes are rejected once the next holder has written.
     *
     * @return whether a lease was ended (false if the name was free)
     * @throws UnsupportedOperationException on the NAMED engine: a named lock belongs to a server session; end that
     *         session with {@code KILL <connection id>} ({@link #inspect(String)} shows it)
     */
    boolean forceRelease(String name);

    /**
     * Removes from the lock table the rows of names nobody used for {@code unusedFor} or longer: no unexpired lease, no
     * lease taken and no fencing token issued within that time. Names that keep coming (an order number, a tenant id)
     * would otherwise leave one row each forever. Fencing tokens stay safe: the highest fence ever removed is kept, and a
     * name that comes back starts above it, so its tokens still only grow. Run-once completions, scheduled jobs' last
     * ticks and the fleet's reserved rows are never removed. Runs in transactions of 1,000 rows; call it from a
     * scheduled job on one instance (under a lock of its own, say), as often as the table grows.
     *
     * @param unusedFor how long a row must have been unused; positive
     * @return how many rows were removed
     * @throws IllegalArgumentException if {@code unusedFor} is null, zero or negative
     */
    long purgeUnused(Duration unusedFor);

    /**
     * The scheduled jobs of this datasource's fleet ({@code @Scheduled} {@code @Locked} methods with a
     * {@code ScheduledExecution} parameter): their state and their run history, as every instance recorded them.
     */
    default io.quarkiverse.mysqllock.jobs.FleetJobs jobs() {
        throw new UnsupportedOperationException(getClass().getName() + " keeps no scheduled jobs");
    }

    /**
     * Takes a row lock ({@code SELECT ... FOR UPDATE}) on the lock table's row for this name, through the connection
     * of the caller's active JTA transaction: the lock ends with the transaction's commit or rollback, so it is exactly
     * as consistent as the data the transaction writes, on replicated databases too. Waits are whole seconds, rounded
     * up ({@link Duration#ZERO} does not wait).
     *
     * @throws IllegalStateException if the calling thread has no active transaction
     * @throws LockNotAcquiredException if the row stayed locked for the whole wait, or on a deadlock (the database
     *         then rolled the transaction back, and it is marked rollback-only)
     */
    void acquireForTransaction(String name, Duration wait);

    /**
     * Fences the commit of a transaction you run yourself (plain JDBC, or Hibernate ORM and Panache through
     * {@code session.doWork(connection -> locks.fence(lock, connection))}): checks, in the open transaction of
     * {@code connection}, that no later holder was granted the lock, and keeps it so until that transaction ends (a
     * shared row lock on the lock's row: a later holder's grant waits for the commit). Call it after the writes, just
     * before the commit, while the lock is held. {@code @Transactional} code needs no call:
     * {@code quarkus.mysql-lock.fenced-commit=true} checks its commits.
     *
     * @param connection a connection to the lock's database, in a transaction (autocommit off)
     * @throws LockLostException if a later holder was granted the lock, or it is known lost: roll the transaction back
     * @throws IllegalStateException if the connection is in autocommit mode, the lock was released, or the engine is
     *         NAMED without {@code fenced-commit=true} (only then does every NAMED grant raise the name's fence)
     */
    void fence(LockHandle lock, java.sql.Connection connection);

    /**
     * Runs {@code action} once across the whole cluster and records its completion durably in the lock table: the
     * first caller runs it under the lock {@code name}; callers that arrive while it runs wait for it and then return
     * false without running it; after completion every call returns false at once. A run that throws (the exception
     * propagates) or whose instance dies is not recorded, so the next caller runs it again.
     *
     * @return true if this call ran the action
     * @throws LockLostException if the lock was lost while the action ran (its completion is recorded all the same)
     */
    boolean runOnce(String name, Runnable action);
}
