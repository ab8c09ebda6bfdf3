package io.quarkiverse.mysqllock.runtime.named;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.engine.Refusals;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;

/**
 * The shared sessions: at most {@code shared-connections} of them, lent to every thread for locks the server grants at
 * once. A thread takes one with its mutex held; idle ones wait in a queue counted by a fair semaphore, so that no
 * thread queues behind one busy session while another is free. Also remembers the names lately found busy here, whose
 * waiters go straight to their own sessions.
 */
final class SharedSessions {

    /** How long a shared session that holds nothing stays pinned for the next lock before it goes back to the pool. */
    static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long a name found busy on the server sends waiters straight to their own sessions. */
    private static final long CONTENDED_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int MAX_CONTENDED = 10_000;
    /** How long a new shared session waits for the pool when others exist to fall back on. */
    private static final long SPARE_CONNECTION_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long no new shared session is asked of a pool that had no connection to spare. */
    private static final long POOL_FULL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ConnectionSource connections;
    private final PinnedSessions pinned;
    private final int sharedLimit;
    private final List<PinnedSession> shared = new CopyOnWriteArrayList<>();
    /** Shared sessions not in use, as many as {@link #idlePermits} counts. */
    private final BlockingQueue<PinnedSession> idleShared = new LinkedBlockingQueue<>();
    private final Semaphore idlePermits = new Semaphore(0, true);
    private final ThreadLocal<PinnedSession> lastShared = new ThreadLocal<>();
    /**
     * Names that a shared attempt found held by another session lately, and when: a waiter for one of them goes
     * straight to its own session, without the round trip that would most likely find it busy again.
     */
    private final ConcurrentHashMap<String, Long> contended = new ConcurrentHashMap<>();
    private final AtomicInteger sharedCount = new AtomicInteger();
    /** Set while a thread asks the pool for another shared session. */
    private final AtomicBoolean openingOne = new AtomicBoolean();
    /** {@link System#nanoTime()} when the pool last had no connection to spare for a shared session. */
    private volatile long poolFullAt = System.nanoTime() - POOL_FULL_NANOS - 1;

    SharedSessions(int sharedConnections, ConnectionSource connections, PinnedSessions pinned) {
        this.sharedLimit = sharedConnections;
        this.connections = connections;
        this.pinned = pinned;
    }

    /** Whether locks go on shared sessions at all ({@code shared-connections} above 0). */
    boolean enabled() {
        return sharedLimit > 0;
    }

    /**
     * A shared session with its mutex held: the one the thread used last if it is idle (its release will find it
     * free), else any idle one, else a new one while there are fewer than the limit, else the first one another thread
     * hands back. Idle sessions wait in a queue, so that a thread never queues behind one busy session while another
     * is free.
     */
    PinnedSession.Guard lockShared(String name, long remainingNanos) {
        long budgetNanos = connections.budgetNanos(remainingNanos);
        long deadline = System.nanoTime() + budgetNanos;
        while (true) {
            PinnedSession.Guard opened = null;
            PinnedSession session = takeIdleShared(name, 0);
            // one thread at a time asks the pool for another shared session: on a pool with none to spare, the others'
            // abandoned requests would hand its connections around among themselves while the first one waits
            if (session == null && mayOpenShared() && openingOne.compareAndSet(false, true)) {
                try {
                    opened = openShared(name, budgetNanos);
                } finally {
                    openingOne.set(false);
                }
                if (opened != null) {
                    return opened;
                }
            }
            if (session == null) {
                session = takeIdleShared(name, Math.max(0, deadline - System.nanoTime()));
                if (session == null) {
                    Duration waited = Duration.ofNanos(System.nanoTime() - deadline + budgetNanos);
                    throw new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null, "Lock '" + name
                            + "' was not acquired: all " + shared.size() + " shared lock connections stayed inside"
                            + " statements for " + waited.toMillis() + " ms and no other could be opened: the database"
                            + " answers slowly, or the pool is too small (quarkus.datasource.jdbc.max-size)", null);
                }
            }
            PinnedSession.Guard locked = session.lock();
            if (!session.retired) {
                lastShared.set(session);
                return locked;
            }
            locked.close(); // retired while idle: dropped
        }
    }

    /**
     * A new shared session with its mutex held, unless there are as many as the limit already, or the pool has no
     * connection to spare while there are others to fall back on (null then: wait for one of those).
     */
    private PinnedSession.Guard openShared(String name, long budgetNanos) {
        int opening = sharedCount.incrementAndGet();
        if (opening > sharedLimit) {
            sharedCount.decrementAndGet();
            return null;
        }
        try {
            // With shared sessions to fall back on (open, or being opened), a pool without a spare connection is not
            // waited for.
            PinnedSession.Guard locked = pinned.pin(name, null, true, opening == 1 ? budgetNanos : SPARE_CONNECTION_NANOS);
            PinnedSession session = locked.session();
            lastShared.set(session);
            shared.add(session);
            pinned.add(session);
            return locked;
        } catch (LockNotAcquiredException e) {
            if (sharedCount.decrementAndGet() == 0 || e.reason() != Reason.POOL_EXHAUSTED) {
                throw e;
            }
            // No connection to spare: wait for a shared one instead, and for a while do not ask the pool.
            poolFullAt = System.nanoTime();
            return null;
        }
    }

    /**
     * An idle shared session, waiting up to {@code waitNanos} for one; null if none came. Threads get them in the order
     * they asked (a fair semaphore counts the idle ones), and a thread takes the one it used last when it is idle.
     */
    private PinnedSession takeIdleShared(String name, long waitNanos) {
        try {
            if (!idlePermits.tryAcquire(waitNanos, TimeUnit.NANOSECONDS)) {
                return null;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Refusals.callerInterrupted(name, Duration.ZERO, e);
        }
        PinnedSession last = lastShared.get();
        return last != null && idleShared.remove(last) ? last : idleShared.poll();
    }

    /** A shared session is out of its statement, its mutex let go: the next thread may take it. */
    void offerIdleShared(PinnedSession session) {
        idleShared.offer(session);
        idlePermits.release();
    }

    /** Whether another shared session may be opened: yes, unless the pool had no connection to spare a moment ago. */
    private boolean mayOpenShared() {
        return shared.isEmpty() || System.nanoTime() - poolFullAt > POOL_FULL_NANOS;
    }

    boolean recentlyContended(String serverName, long now) {
        Long since = contended.get(serverName);
        if (since == null) {
            return false;
        }
        if (now - since < CONTENDED_NANOS) {
            return true;
        }
        contended.remove(serverName, since);
        return false;
    }

    /** A shared attempt found the name held by another session just now. */
    void markContended(String serverName) {
        if (contended.size() >= MAX_CONTENDED) {
            contended.clear();
        }
        contended.put(serverName, System.nanoTime());
    }

    /** The session was retired or discarded: it no longer counts against the limit. */
    void forget(PinnedSession session) {
        shared.remove(session); // if it waits in idleShared, it is dropped when taken
        sharedCount.decrementAndGet();
    }

    boolean contains(PinnedSession session) {
        return shared.contains(session);
    }

    /** The shared sessions now (a snapshot when iterated). */
    List<PinnedSession> all() {
        return Collections.unmodifiableList(shared);
    }
}
