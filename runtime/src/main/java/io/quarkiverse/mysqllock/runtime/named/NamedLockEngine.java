package io.quarkiverse.mysqllock.runtime.named;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.EngineHealth;
import io.quarkiverse.mysqllock.runtime.HoldEngine;
import io.quarkiverse.mysqllock.runtime.LockHold;
import io.quarkiverse.mysqllock.runtime.LockMetrics;
import io.quarkiverse.mysqllock.runtime.LossNotifier;
import io.quarkiverse.mysqllock.runtime.LockEngine;
import io.quarkiverse.mysqllock.runtime.LockTable;
import io.quarkiverse.mysqllock.runtime.SqlErrors;
import io.quarkiverse.mysqllock.runtime.fleet.Membership;
import io.quarkiverse.mysqllock.runtime.named.SessionStatements.Grant;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * The NAMED engine: {@code GET_LOCK} on a connection kept out of the pool while it holds locks.
 * <p>
 * Locks the server grants at once go on a few shared sessions, several locks of several threads on each: in-JVM
 * exclusion comes first (a name held here never reaches a shared session, where the server would
 * grant it again), each lock is released on its own, and a failed session loses every lock on it. A lock that must
 * be waited for is waited for on a session of the thread's own, which takes the thread's further locks while it
 * holds any, so that the server sees deadlocks among them; cycles among this instance's threads are found here before
 * any wait. Re-entrant acquisitions by the owner thread are counted here and never reach the server. A session goes
 * back to the pool only after the server confirmed it holds no named lock ({@code RELEASE_ALL_LOCKS()}); a session
 * whose state is in doubt is destroyed, which frees its locks on the server.
 */
public final class NamedLockEngine implements LockEngine, HoldEngine<NamedLock> {

    private static final Logger LOG = Logger.getLogger(NamedLockEngine.class);
    private static final int NAMES_PER_CHECK = 200;
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;
    /** How long a shared session that holds nothing stays pinned for the next lock before it goes back to the pool. */
    private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long a name found busy on the server sends waiters straight to their own sessions. */
    private static final long CONTENDED_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int MAX_CONTENDED = 10_000;
    /** How long a new shared session waits for the pool when others exist to fall back on. */
    private static final long SPARE_CONNECTION_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long no new shared session is asked of a pool that had no connection to spare. */
    private static final long POOL_FULL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ConnectionSource connections;
    private final LockTable table;
    private final String identity;
    private final SessionStatements statements;
    private volatile boolean releaseAllSupported = true;
    private volatile boolean closed;

    private final ConcurrentHashMap<String, NamedLock> local = new ConcurrentHashMap<>();
    /** The lock each thread waits for on the server now; guarded by itself. */
    private final Map<Thread, String> waitingFor = new HashMap<>();
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
    /** {@link System#nanoTime()} when the pool last had no connection to spare for a shared session. */
    private volatile long poolFullAt = System.nanoTime() - POOL_FULL_NANOS - 1;
    private final ConcurrentHashMap<Thread, PinnedSession> affinity = new ConcurrentHashMap<>();
    private final Set<PinnedSession> sessions = ConcurrentHashMap.newKeySet();
    /** Schedules the periodic work; the statements it causes run on {@link #checks}. */
    private final ScheduledExecutorService keepalive;
    /** Runs each session's check and give-back on a thread of its own: a stalled session delays no other. */
    private final ExecutorService checks;
    private final LossNotifier notifier;
    /** This instance's membership of its fleet: locks are granted, and valid, only while it is confirmed. */
    private final Membership membership;
    private final AtomicBoolean confirming = new AtomicBoolean();

    public NamedLockEngine(ConnectionSource connections, LockTable table, String identity, Duration keepaliveInterval,
            int sharedConnections, LockMetrics metrics, Membership membership) {
        this.notifier = new LossNotifier(metrics, LockMode.NAMED);
        this.membership = membership;
        this.connections = connections;
        this.table = table;
        this.identity = identity;
        this.statements = new SessionStatements(connections);
        this.keepalive = Executors.newSingleThreadScheduledExecutor(ConnectionSource.daemonThreads("mysql-lock-keepalive-"));
        this.checks = Executors.newCachedThreadPool(ConnectionSource.daemonThreads("mysql-lock-check-"));
        long period = keepaliveInterval.toNanos();
        keepalive.scheduleWithFixedDelay(this::checkSessions, period, period, TimeUnit.NANOSECONDS);
        keepalive.scheduleWithFixedDelay(this::confirmMembership, period, period, TimeUnit.NANOSECONDS);
        // Twice per period, the margin of the membership: its lapse is reported at least half a period before it can
        // expire on the server.
        keepalive.scheduleWithFixedDelay(this::watchMembership, period / 2, period / 2, TimeUnit.NANOSECONDS);
        membership.listen(new Membership.Listener() {
            @Override
            public void lapsed() {
                abandonAll(LockLostException.Reason.MEMBERSHIP_LOST, membership.lapseMessage());
            }

            @Override
            public void out(String why) {
                abandonAll(LockLostException.Reason.MEMBERSHIP_LOST, why);
            }
        });
        this.sharedLimit = sharedConnections;
        if (sharedConnections > 0) {
            keepalive.scheduleWithFixedDelay(this::giveBackIdleShared, LINGER_NANOS, LINGER_NANOS / 2,
                    TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public LockMode mode() {
        return LockMode.NAMED;
    }

    // --- acquire ---

    @Override
    public ControlledHandle acquire(String name, String serverName, long waitNanos, boolean throwIfBusy,
            boolean reentrant, long leaseCapNanos) {
        ensureOpen();
        long start = System.nanoTime();
        long deadline = start + waitNanos;
        return membership.granting(name, waitNanos,
                () -> acquireConfirmed(name, serverName, start, deadline, throwIfBusy, reentrant));
    }

    private ControlledHandle acquireConfirmed(String name, String serverName, long start, long deadline,
            boolean throwIfBusy, boolean reentrant) {
        boolean noWait = deadline == start;
        // A non-reentrant hold has no owner thread: nothing nests onto it, and it never uses a thread's own session.
        Thread me = reentrant ? Thread.currentThread() : null;
        if (me != null) {
            ControlledHandle nested = nest(me, serverName);
            if (nested != null) {
                return nested;
            }
        }
        if (sharedLimit > 0 && (me == null || !affinity.containsKey(me))
                && (noWait || !recentlyContended(serverName, start))) {
            Attempt shared = tryShared(name, serverName, me, deadline, noWait && throwIfBusy);
            if (shared.handle != null) {
                return shared.handle;
            }
            if (noWait) {
                return busy(name, start, throwIfBusy, shared.holder);
            }
        }
        return acquireOnOwnSession(name, serverName, me, start, deadline, throwIfBusy);
    }

    /** A nested hold on the lock the thread's own call holds, or null if it holds none by that name. */
    private ControlledHandle nest(Thread me, String serverName) {
        NamedLock mine = local.get(serverName);
        if (mine == null || !mine.ownedBy(me)) {
            return null;
        }
        PinnedSession session = mine.session;
        session.mutex.lock();
        try {
            if (!mine.isHeld() || session.retired) {
                return null;
            }
            mine.holds++;
            return new LockHold<>(mine, this, me);
        } finally {
            session.mutex.unlock();
        }
    }

    private record Attempt(ControlledHandle handle, String holder) {
    }

    /**
     * Asks for the lock without waiting on a shared session. In-JVM exclusion comes first: a name this instance holds
     * never reaches a shared session, where the server would grant it again (named locks are re-entrant per session).
     * Two threads asking at once on one session meet under its mutex; on two sessions the server decides.
     */
    private Attempt tryShared(String name, String serverName, Thread me, long deadline, boolean describe) {
        for (int attempt = 1;; attempt++) {
            NamedLock here = local.get(serverName);
            if (here != null && here.isHeld()) {
                return new Attempt(null, describe ? describeLocal(here) : null);
            }
            PinnedSession session = null;
            try {
                session = lockShared(name, deadline - System.nanoTime());
                // Again under the session's mutex: a grant on this session is registered under it, so none is missed.
                here = local.get(serverName);
                if (here != null && here.isHeld()) {
                    return new Attempt(null, describe ? describeLocal(here) : null);
                }
                NamedLock stale = session.held.get(serverName);
                if (stale != null) {
                    // Told lost but not released yet, still held by this session: GET_LOCK would grant it again.
                    return new Attempt(null, describe ? describeLocal(stale) : null);
                }
                session.lastUsed = System.nanoTime();
                Grant grant = statements.getLock(session, serverName, BigDecimal.ZERO, 0);
                if (grant == Grant.GRANTED) {
                    return new Attempt(register(session, name, serverName, me), null);
                }
                if (grant == Grant.INTERRUPTED) {
                    throw interrupted(name, Duration.ZERO);
                }
                if (grant == Grant.READ_ONLY) {
                    // Locks on this session live on a server that is no longer the writer; a new one may reach it.
                    failSessionReadOnly(session);
                    if (attempt >= MAX_STALE_CONNECTIONS) {
                        throw readOnly(name, Duration.ZERO);
                    }
                    continue;
                }
                if (contended.size() >= MAX_CONTENDED) {
                    contended.clear();
                }
                contended.put(serverName, System.nanoTime());
                return new Attempt(null, describe ? describeHolder(session, serverName) : null);
            } catch (SQLException e) {
                // Only an error that ended the session fails its co-tenants' locks; any other fails this call alone.
                boolean ended = session == null || endedBy(session, e);
                if (session != null && ended) {
                    failSession(session, e);
                }
                // A shared connection that died (server restart, KILL) is replaced; its locks were reported lost.
                if (!ended || !SqlErrors.isConnectionFailure(e) || attempt >= MAX_STALE_CONNECTIONS) {
                    throw new LockNotAcquiredException(name, Duration.ZERO, Reason.DATABASE_ERROR, null,
                            "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
                }
                LOG.debugf(e, "Replacing a failed shared lock connection for lock '%s'", name);
            } finally {
                if (session != null) {
                    boolean live = !session.retired;
                    session.mutex.unlock();
                    if (live) {
                        offerIdleShared(session);
                    }
                }
            }
        }
    }

    /**
     * A shared session with its mutex held: the one the thread used last if it is idle (its release will find it
     * free), else any idle one, else a new one while there are fewer than the limit, else the first one another thread
     * hands back. Idle sessions wait in a queue, so that a thread never queues behind one busy session while another
     * is free.
     */
    private PinnedSession lockShared(String name, long remainingNanos) {
        long budgetNanos = connections.budgetNanos(remainingNanos);
        long deadline = System.nanoTime() + budgetNanos;
        while (true) {
            PinnedSession session = takeIdleShared(name, 0);
            if (session == null && mayOpenShared()) {
                int opening = sharedCount.incrementAndGet();
                if (opening <= sharedLimit) {
                    try {
                        // With shared sessions to fall back on (open, or being opened), a pool without a spare
                        // connection is not waited for.
                        session = pin(name, null, true, opening == 1 ? budgetNanos : SPARE_CONNECTION_NANOS);
                        lastShared.set(session);
                        shared.add(session);
                        sessions.add(session);
                        return session;
                    } catch (LockNotAcquiredException e) {
                        if (sharedCount.decrementAndGet() == 0 || e.reason() != Reason.POOL_EXHAUSTED) {
                            throw e;
                        }
                        // No connection to spare: wait for a shared one instead, and for a while do not ask the pool.
                        poolFullAt = System.nanoTime();
                    }
                } else {
                    sharedCount.decrementAndGet();
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
            session.mutex.lock();
            if (!session.retired) {
                lastShared.set(session);
                return session;
            }
            session.mutex.unlock(); // retired while idle: dropped
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
            throw new LockNotAcquiredException(name, Duration.ZERO, Reason.DATABASE_ERROR, null,
                    "Interrupted while waiting for a shared lock connection for lock '" + name + "'", e);
        }
        PinnedSession last = lastShared.get();
        return last != null && idleShared.remove(last) ? last : idleShared.poll();
    }

    private void offerIdleShared(PinnedSession session) {
        idleShared.offer(session);
        idlePermits.release();
    }

    /** Whether another shared session may be opened: yes, unless the pool had no connection to spare a moment ago. */
    private boolean mayOpenShared() {
        return shared.isEmpty() || System.nanoTime() - poolFullAt > POOL_FULL_NANOS;
    }

    private boolean recentlyContended(String serverName, long now) {
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

    /**
     * Records a lock the server granted on the session; the mutex is held. The grant is void if the session was ended
     * under the statement (a lapse abandons busy sessions), and is given back if the membership is not confirmed now.
     */
    private ControlledHandle register(PinnedSession session, String name, String serverName, Thread owner)
            throws SQLException {
        NamedLock lock = new NamedLock(name, serverName, session, Instant.now());
        session.held.put(serverName, lock);
        local.put(serverName, lock);
        // Read after the lock is visible: an abandonment either sees the lock (and reports it) or is seen here.
        if (session.retired) {
            session.held.remove(serverName, lock);
            local.remove(serverName, lock);
            // ended under the statement: the server freed whatever it granted, or will
            throw new SQLException("The lock connection was ended while its GET_LOCK ran", "08003");
        }
        if (closed) {
            releaseLocked(lock);
            throw new IllegalStateException("The lock manager is shut down");
        }
        if (!membership.confirmed(System.nanoTime())) {
            // The membership lapsed during the wait: the fleet may have moved to leases, which this lock excludes not.
            releaseLocked(lock);
            throw new Membership.Unconfirmed();
        }
        return new LockHold<>(lock, this, owner);
    }

    private ControlledHandle busy(String name, long start, boolean throwIfBusy, String holder) {
        if (!throwIfBusy) {
            return null;
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        throw new LockNotAcquiredException(name, waited, Reason.BUSY, holder, "Lock '" + name + "' is held by "
                + (holder == null ? "another session" : holder) + "; not acquired within " + waited.toMillis() + " ms",
                null);
    }

    /** A session found its server read-only: it was failed, and the acquisition may try a new connection. */
    private static final class ServerReadOnly extends Exception {
        ServerReadOnly() {
            super(null, null, false, false);
        }
    }

    private static LockNotAcquiredException readOnly(String name, Duration waited) {
        return new LockNotAcquiredException(name, waited, Reason.READ_ONLY, null, "Lock '" + name + "' was not acquired:"
                + " the lock database is read-only (a replica, or a primary demoted by a failover), and new connections"
                + " still reach a read-only server. Named locks taken there would be invisible to the writable primary",
                null);
    }

    private static LockNotAcquiredException interrupted(String name, Duration waited) {
        return new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null, "Lock '" + name
                + "' was not acquired: the server interrupted the wait (GET_LOCK returned NULL, as after KILL QUERY)",
                null);
    }

    /**
     * The thread's own session: a thread waits on a session of its own, and keeps using it while it holds locks there,
     * so that the server sees (and breaks) deadlocks between the locks on it.
     */
    private ControlledHandle acquireOnOwnSession(String name, String serverName, Thread me, long start, long deadline,
            boolean throwIfBusy) {
        boolean waits = me != null && deadline - System.nanoTime() > 0;
        if (waits) {
            startWaiting(me, name, serverName);
        }
        try {
            return ownSession(name, serverName, me, start, deadline, throwIfBusy);
        } finally {
            if (waits) {
                stopWaiting(me);
            }
        }
    }

    private ControlledHandle ownSession(String name, String serverName, Thread me, long start, long deadline,
            boolean throwIfBusy) {
        for (int attempt = 1;; attempt++) {
            if (attempt > 1) {
                membership.confirmBeforeGrant(name, connections.budgetNanos(deadline - System.nanoTime()));
            }
            PinnedSession session = me == null ? null : lockAffineSession(me, serverName);
            boolean fresh = false;
            if (session == null) {
                session = pin(name, me, false, connections.budgetNanos(deadline - System.nanoTime()));
                fresh = true;
                // Known before it waits, so that a lapse during the wait ends it (and voids its grant).
                sessions.add(session);
            }
            try {
                return acquireOn(session, fresh, name, serverName, start, deadline, throwIfBusy);
            } catch (ServerReadOnly e) {
                // The session reached a read-only server; a new connection may reach the writer.
                if (attempt >= MAX_STALE_CONNECTIONS) {
                    throw readOnly(name, Duration.ofNanos(System.nanoTime() - start));
                }
            } catch (SQLException e) {
                Duration waited = Duration.ofNanos(System.nanoTime() - start);
                if (SqlErrors.isDeadlock(e)) {
                    // The server refused this wait only; the session keeps every lock it held.
                    retireIfEmpty(session);
                    throw deadlock(name, waited, "the server detected a deadlock", e);
                }
                if (!endedBy(session, e)) {
                    // An error of this statement alone (a privilege, a time limit): the session keeps its locks.
                    retireIfEmpty(session);
                    throw new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null,
                            "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
                }
                failSession(session, e);
                if (!membership.confirmed(System.nanoTime())) {
                    throw new Membership.Unconfirmed(); // a lapse ended the session under its wait
                }
                // A pooled connection that died idle (server restart, wait_timeout) is replaced, not reported.
                if (!fresh || !SqlErrors.isConnectionFailure(e) || attempt >= MAX_STALE_CONNECTIONS) {
                    throw new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null,
                            "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
                }
                LOG.debugf(e, "Replacing a dead pooled connection for lock '%s'", name);
            } finally {
                session.mutex.unlock();
            }
        }
    }

    private static LockNotAcquiredException deadlock(String name, Duration waited, String detectedBy, SQLException e) {
        return new LockNotAcquiredException(name, waited, Reason.DEADLOCK, null, "Lock '" + name + "' was not acquired: "
                + detectedBy + ". This thread holds other locks and the holder of '" + name + "' waits for one of them."
                + " Acquire locks in one global order, or release and retry" + (e == null ? "" : ": " + SqlErrors.describe(e)),
                e);
    }

    private ControlledHandle acquireOn(PinnedSession session, boolean fresh, String name, String serverName, long start,
            long deadline, boolean throwIfBusy) throws SQLException, ServerReadOnly {
        Grant grant = statements.getLock(session, serverName, deadline);
        if (grant == Grant.READ_ONLY) {
            failSessionReadOnly(session);
            throw new ServerReadOnly();
        }
        if (grant == Grant.GRANTED) {
            ControlledHandle handle = register(session, name, serverName, session.affinity);
            if (fresh && session.affinity != null) {
                affinity.put(session.affinity, session);
            }
            return handle;
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        if (grant == Grant.INTERRUPTED) {
            retireIfEmpty(session);
            throw interrupted(name, waited);
        }
        String holder = throwIfBusy ? describeHolder(session, serverName) : null;
        retireIfEmpty(session);
        return busy(name, start, throwIfBusy, holder);
    }

    /**
     * Registers the thread as waiting for a lock and refuses the wait if that closes a cycle among this instance's
     * threads: the server sees only cycles among the locks of waiting sessions, and shared sessions never wait.
     */
    private void startWaiting(Thread me, String name, String serverName) {
        synchronized (waitingFor) {
            String next = serverName;
            for (int step = 0; step < 1_000; step++) {
                NamedLock holder = local.get(next);
                Thread owner = holder == null ? null : holder.owner();
                if (owner == null || !holder.isHeld()) {
                    break;
                }
                if (owner == me) {
                    throw deadlock(name, Duration.ZERO, "this instance detected a deadlock among its threads", null);
                }
                next = waitingFor.get(owner);
                if (next == null) {
                    break;
                }
            }
            waitingFor.put(me, serverName);
        }
    }

    private void stopWaiting(Thread me) {
        synchronized (waitingFor) {
            waitingFor.remove(me);
        }
    }

    /**
     * The calling thread's session with its mutex held, or null if it has none that can still be used for this name: a
     * session that holds the name already (for a hold the thread's call no longer owns, such as one waiting for its
     * late release) would grant it again, since named locks are re-entrant per session.
     */
    private PinnedSession lockAffineSession(Thread me, String serverName) {
        PinnedSession session = affinity.get(me);
        if (session == null) {
            return null;
        }
        session.mutex.lock();
        if (session.retired || session.held.containsKey(serverName)) {
            session.mutex.unlock();
            return null;
        }
        return session;
    }

    /**
     * Borrows a connection and makes it a session, every statement on it bounded by statement-timeout; returns with the
     * session's mutex held.
     */
    private PinnedSession pin(String name, Thread me, boolean shared, long budgetNanos) {
        Connection pooled = connections.borrowWithin(name, budgetNanos);
        try {
            Connection raw = ConnectionSource.raw(pooled);
            int networkTimeout = raw.getNetworkTimeout();
            ConnectionSource.bound(raw, connections.statementTimeoutMillis());
            boolean autoCommitWasOff = !raw.getAutoCommit();
            if (autoCommitWasOff) {
                raw.setAutoCommit(true);
            }
            PinnedSession session = new PinnedSession(pooled, raw, statements.server(raw), me, shared, autoCommitWasOff,
                    networkTimeout);
            session.mutex.lock();
            return session;
        } catch (SQLException e) {
            connections.discard(pooled);
            throw new LockNotAcquiredException(name, Duration.ZERO, Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: preparing the lock connection failed: " + SqlErrors.describe(e),
                    e);
        }
    }

    /**
     * Whether an error of a statement on a session ended the session (or leaves it in doubt): a connection failure
     * does, and so does any error after which the session no longer answers as itself. Any other (a privilege refused,
     * a time limit of the server's) ends the one call, not the locks of the session's co-tenants.
     */
    private static boolean endedBy(PinnedSession session, SQLException e) {
        return SqlErrors.isConnectionFailure(e) || !SessionStatements.stillTheSameSession(session);
    }

    private String describeHolder(PinnedSession session, String serverName) throws SQLException {
        NamedLock mine = local.get(serverName);
        if (mine != null && mine.isHeld()) {
            return describeLocal(mine);
        }
        Long holder = SessionStatements.holderOf(session.raw, serverName);
        return holder == null ? null : "server connection " + holder;
    }

    private String describeLocal(NamedLock lock) {
        Thread owner = lock.owner();
        return identity + " (server connection " + lock.session.connectionId
                + (owner == null ? ", asynchronous or handed over" : ", thread '" + owner.getName() + "'") + ")";
    }

    // --- release ---

    @Override
    public void release(NamedLock lock) {
        if (!BlockingOperationControl.isBlockingAllowed()) {
            // Never block an event loop: the handle is already invalid, the server statement follows on a worker.
            connections.executor().execute(() -> release(lock));
            return;
        }
        PinnedSession session = lock.session;
        session.mutex.lock();
        try {
            if (--lock.holds > 0 || lock.released) {
                return;
            }
            // A lock lost while its session lives on (a lapsed membership) is still held on the server: release it too.
            if (lock.lost != null && (session.retired || session.held.get(lock.serverName) != lock)) {
                return;
            }
            if (lock.lost == null && membership.lapsed(System.nanoTime())) {
                // Its lapse is not reported yet: the fleet may have moved to leases while this lock was held.
                notifier.loseAtRelease(lock, LockLostException.Reason.MEMBERSHIP_LOST, "Lock '" + lock.name
                        + "' was lost before it was released: " + membership.lapseMessage(), null);
            }
            session.lastUsed = System.nanoTime();
            releaseLocked(lock);
        } finally {
            session.mutex.unlock();
        }
    }

    @Override
    public void abandon(NamedLock lock, String message) {
        lose(lock, LockLostException.Reason.CANCELLED, message, null);
        release(lock);
    }

    /** Releases the lock on the server; the session's mutex is held. */
    private void releaseLocked(NamedLock lock) {
        PinnedSession session = lock.session;
        lock.released = true;
        session.held.remove(lock.serverName);
        local.remove(lock.serverName, lock);
        if (session.retired) {
            if (lock.lost == null) {
                // Its session was ended without it being told (never expected): the server freed it meanwhile.
                notifier.loseAtRelease(lock, LockLostException.Reason.CONNECTION_LOST, "Lock '" + lock.name
                        + "' was lost before it was released: its connection (server session " + session.connectionId
                        + ") had been ended", null);
            }
            return;
        }
        // A shared session stays pinned a moment for the next lock; a thread's own goes back with its last lock.
        boolean last = session.held.isEmpty() && !session.shared;
        boolean releaseAll = last && releaseAllSupported;
        SessionStatements.Released released;
        try {
            released = release(session, lock, releaseAll);
        } catch (SQLException e) {
            if (releaseAll && SqlErrors.isMissingFunction(e)) {
                releaseAllSupported = false;
                LOG.warn("The server has no RELEASE_ALL_LOCKS() (MariaDB before 10.5.2): lock connections will be"
                        + " closed instead of returned to the pool");
                // Closing the session releases the lock; nothing was lost.
                failSession(session, e);
                return;
            }
            failSession(session, e);
            notifier.loseAtRelease(lock, LockLostException.Reason.CONNECTION_LOST, "Lock '" + lock.name
                    + "' was lost before it was released: its connection (server session " + session.connectionId
                    + ") failed: " + SqlErrors.describe(e), e);
            return;
        }
        if (!released.released()) {
            notifier.loseAtRelease(lock, LockLostException.Reason.NOT_HELD, "Lock '" + lock.name
                    + "' was lost before it was released: the server no longer held it for this instance's session "
                    + session.connectionId, null);
        }
        if (released.others() > 0) {
            LOG.warnf("The connection of lock '%s' held %d other named lock(s) not taken through LockManager; they were"
                    + " released before the connection went back to the pool", lock.name, released.others());
        }
        if (last) {
            if (releaseAll) {
                retire(session);
            } else {
                discardLocked(session);
            }
        }
    }

    /**
     * {@code RELEASE_LOCK}, tried again once after an error that left the session alive (a time limit of the server's):
     * the lock must not stay held by a session that goes on serving others.
     */
    private SessionStatements.Released release(PinnedSession session, NamedLock lock, boolean releaseAll)
            throws SQLException {
        try {
            return statements.release(session, lock.serverName, releaseAll);
        } catch (SQLException e) {
            if ((releaseAll && SqlErrors.isMissingFunction(e)) || endedBy(session, e)) {
                throw e;
            }
            return statements.release(session, lock.serverName, releaseAll);
        }
    }

    private void retireIfEmpty(PinnedSession session) {
        if (!session.retired && session.held.isEmpty() && !session.shared) {
            retire(session);
        }
    }

    /** Gives back the shared sessions that have held nothing for a moment, each on a thread of its own. */
    private void giveBackIdleShared() {
        for (PinnedSession session : shared) {
            if (System.nanoTime() - session.lastUsed >= LINGER_NANOS) {
                onCheckThread(session, () -> {
                    if (!session.mutex.tryLock()) {
                        return;
                    }
                    try {
                        if (!session.retired && session.held.isEmpty()
                                && System.nanoTime() - session.lastUsed >= LINGER_NANOS) {
                            giveBackEmpty(session, true);
                        }
                    } finally {
                        session.mutex.unlock();
                    }
                });
            }
        }
    }

    /**
     * Runs work on a session on a thread of the check pool, unless such work on it still runs (a stalled statement):
     * one bad session never delays another's check.
     */
    private void onCheckThread(PinnedSession session, Runnable work) {
        if (!session.checking.compareAndSet(false, true)) {
            return;
        }
        if (!runOnChecks(() -> {
            try {
                work.run();
            } catch (RuntimeException e) {
                LOG.error("Checking a lock connection failed", e);
            } finally {
                session.checking.set(false);
            }
        })) {
            session.checking.set(false); // shutting down
        }
    }

    /**
     * Returns a session to the pool once the server released whatever it still held ({@code RELEASE_ALL_LOCKS()}), or
     * destroys it; the mutex is held.
     *
     * @param heldNone the session should hold no lock: warn about any the server released
     */
    private void giveBackEmpty(PinnedSession session, boolean heldNone) {
        if (!releaseAllSupported) {
            discardLocked(session);
            return;
        }
        try {
            int released = statements.releaseAll(session);
            if (heldNone && released > 0) {
                LOG.warnf("A lock connection held %d named lock(s) not taken through LockManager; they were released"
                        + " before the connection went back to the pool", released);
            }
        } catch (SQLException e) {
            if (SqlErrors.isMissingFunction(e)) {
                releaseAllSupported = false;
            }
            discardLocked(session);
            return;
        }
        retire(session);
    }

    /** Gives back a session that holds no named lock, as the pool lent it; the mutex is held. */
    private void retire(PinnedSession session) {
        session.retired = true;
        forget(session);
        if (!session.handedBack.compareAndSet(false, true)) {
            return; // ended under the statement meanwhile
        }
        try {
            session.raw.setNetworkTimeout(Runnable::run, session.originalNetworkTimeout);
            if (session.autoCommitWasOff) {
                session.raw.setAutoCommit(false);
            }
        } catch (SQLException e) {
            connections.discard(session.pooled);
            return;
        }
        connections.giveBack(session.pooled);
    }

    private void discardLocked(PinnedSession session) {
        session.retired = true;
        forget(session);
        if (session.handedBack.compareAndSet(false, true)) {
            connections.discard(session.pooled);
        }
    }

    private void forget(PinnedSession session) {
        if (sessions.remove(session) && session.shared) {
            shared.remove(session); // if it waits in idleShared, it is dropped when taken
            sharedCount.decrementAndGet();
        }
        if (session.affinity != null) {
            affinity.remove(session.affinity, session);
        }
    }

    /** The session is broken or in doubt: every lock on it is lost, and it is destroyed. The mutex is held. */
    private void failSession(PinnedSession session, SQLException cause) {
        failSession(session, LockLostException.Reason.CONNECTION_LOST,
                "its connection (server session " + session.connectionId + ") failed: " + SqlErrors.describe(cause), cause);
    }

    /**
     * The session's server is read-only: a replica, or a primary demoted by a failover that the session still reaches.
     * Named locks there are invisible to the writable server, where others may now take them: every lock of the session
     * is lost, the session destroyed, and the pool's connections replaced. The mutex is held.
     */
    private void failSessionReadOnly(PinnedSession session) {
        failSession(session, LockLostException.Reason.READ_ONLY, "its connection (server session "
                + session.connectionId + ") reaches a read-only server: a replica, or a primary demoted by a failover,"
                + " where named locks are invisible to the writable server", null);
        connections.readOnlyFound("named lock connection " + session.connectionId);
    }

    private void failSession(PinnedSession session, LockLostException.Reason reason, String why, Throwable cause) {
        List<NamedLock> lost = new ArrayList<>(session.held.values());
        session.held.clear();
        // Told first: once the connection ends, the server frees the locks for others.
        for (NamedLock lock : lost) {
            local.remove(lock.serverName, lock);
            lose(lock, reason, "Lock '" + lock.name + "' was lost: " + why, cause);
        }
        discardLocked(session);
    }

    private void lose(NamedLock lock, LockLostException.Reason reason, String message, Throwable cause) {
        notifier.lose(lock, reason, message, cause);
    }

    // --- fencing ---

    /**
     * Increments the name's fence in the lock table on a pooled connection, then checks there that this lock's
     * session holds the lock: held then means held since the grant, so the fence was issued while it was held (and is
     * below every later holder's). Neither statement runs on the pinned session, so a row lock the update waits for (a
     * transaction holding the row) never holds the session's mutex, and an error of these statements fails this call
     * alone, not the locks of the session's co-tenants.
     */
    @Override
    public long fencingToken(NamedLock lock) {
        if (lock.lost != null) {
            throw new LockLostException(lock.name, lock.lost.reason(),
                    "Lock '" + lock.name + "' is lost: no fencing token can be issued", lock.lost);
        }
        if (lock.released) {
            throw new IllegalStateException("Lock '" + lock.name + "' was released: it has no fencing token");
        }
        long fence = lock.fence;
        if (fence != 0) {
            return fence;
        }
        if (!BlockingOperationControl.isBlockingAllowed()) {
            throw new IllegalStateException("The first fencingToken() of lock '" + lock.name + "' reads the"
                    + " database and was called on an event-loop thread. Call it on a worker thread (for a Uni:"
                    + " .emitOn(Infrastructure.getDefaultWorkerPool()) first)");
        }
        lock.fenceIssue.lock();
        try {
            if (lock.fence == 0) {
                lock.fence = issueFence(lock);
            }
            return lock.fence;
        } finally {
            lock.fenceIssue.unlock();
        }
    }

    private long issueFence(NamedLock lock) {
        ConnectionSource.Borrowed borrowed = null;
        try {
            borrowed = connections.borrowForStatements(lock.name, 0);
            Connection raw = borrowed.raw();
            long fence = table.nextFence(raw, lock.serverName);
            Long holder = SessionStatements.holderOf(raw, lock.serverName);
            connections.giveBack(borrowed);
            if (holder == null || holder != lock.session.connectionId) {
                LockLostException lost = new LockLostException(lock.name, LockLostException.Reason.NOT_HELD,
                        "Lock '" + lock.name + "' is lost: while its fencing token was issued, the server showed it "
                                + (holder == null ? "free" : "held by connection " + holder)
                                + ", not by this instance's session " + lock.session.connectionId,
                        null);
                lose(lock, lost.reason(), lost.getMessage(), null);
                throw lost;
            }
            return fence;
        } catch (SQLException e) {
            if (borrowed != null) {
                connections.discard(borrowed.pooled());
            }
            if (SqlErrors.isReadOnly(e)) {
                connections.readOnlyFound("fencing token of lock '" + lock.name + "'");
            }
            throw new IllegalStateException("Lock '" + lock.name + "': no fencing token could be issued (the lock is"
                    + " still held): " + SqlErrors.describe(e), e);
        }
    }

    // --- keepalive ---

    /**
     * Reports a lapse of this instance's membership of its fleet, found by the clock alone, on a thread of its own: a
     * renewal stuck on a stalled connection never delays it, and ending the sessions of a lapse never delays the
     * keepalive.
     */
    private void watchMembership() {
        if (!membership.confirmed(System.nanoTime())) {
            runOnChecks(membership::checkLapse);
        }
    }

    /** Renews this instance's membership of its fleet, on a thread of its own, never two at once. */
    private void confirmMembership() {
        if (!confirming.compareAndSet(false, true)) {
            return;
        }
        if (!runOnChecks(() -> {
            try {
                membership.renew();
            } finally {
                confirming.set(false);
            }
        })) {
            confirming.set(false);
        }
    }

    /** Runs work on a thread of the check pool; false if the engine is shutting down. */
    private boolean runOnChecks(Runnable work) {
        try {
            checks.execute(work);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** A lock is valid while it is held and this instance's membership of its fleet is confirmed. */
    @Override
    public boolean isValid(NamedLock lock) {
        if (lock.lost == null && !membership.confirmed(System.nanoTime())) {
            lose(lock, LockLostException.Reason.MEMBERSHIP_LOST, "Lock '" + lock.name + "' was lost: " + membership.lapseMessage(),
                    null);
        }
        return lock.lost == null;
    }

    /**
     * Every lock of every session is lost and every session ended (a session busy in a statement is ended under it):
     * the server frees the locks, so that nothing stays held that its holders were told they lost.
     */
    private void abandonAll(LockLostException.Reason reason, String why) {
        for (PinnedSession session : List.copyOf(sessions)) {
            if (session.mutex.tryLock()) {
                try {
                    if (!session.retired) {
                        failSession(session, reason, why, null);
                    }
                } finally {
                    session.mutex.unlock();
                }
            } else {
                abandonBusy(session, reason, why);
            }
        }
    }

    /**
     * Ends a session whose mutex a statement holds, under it, and tells the holders of its locks; the statement's own
     * grant, if it gets one, is void ({@link #register}).
     */
    private void abandonBusy(PinnedSession session, LockLostException.Reason reason, String why) {
        session.retired = true;
        forget(session);
        for (NamedLock lock : List.copyOf(local.values())) {
            if (lock.session == session && local.remove(lock.serverName, lock)) {
                lose(lock, reason, "Lock '" + lock.name + "' was lost: " + why, null);
            }
        }
        if (session.handedBack.compareAndSet(false, true)) {
            connections.discard(session.pooled);
        }
    }

    /** Starts a check of every session that holds locks, each on a thread of its own. */
    private void checkSessions() {
        for (PinnedSession session : sessions) {
            onCheckThread(session, () -> {
                if (!session.mutex.tryLock()) {
                    return; // busy in a statement, which itself would fail if the session were gone
                }
                try {
                    if (!session.retired && !session.held.isEmpty()) {
                        check(session);
                    }
                } finally {
                    session.mutex.unlock();
                }
            });
        }
    }

    /** Checks a session's locks on the server; false if the session failed (its locks are then reported lost). */
    private boolean check(PinnedSession session) {
        List<NamedLock> locks = new ArrayList<>(session.held.values());
        try {
            // Loss is per connection: a session that is still the same server session keeps every named lock it was
            // granted (only its own RELEASE_LOCK, or its end, frees one). One statement per connection checks that,
            // sampling one lock in turn (a reset session keeps its id but no lock); a sample found gone checks all.
            NamedLock sample = locks.get(Math.floorMod(session.checks++, locks.size()));
            long[] sampled = SessionStatements.isUsedLocks(session.raw, List.of(sample.serverName));
            SessionStatements.checkSameSession(session, sampled[0]);
            if (sampled[1] != 0) {
                failSessionReadOnly(session);
                return false;
            }
            if (sampled[2] == session.connectionId) {
                return true;
            }
            for (int from = 0; from < locks.size(); from += NAMES_PER_CHECK) {
                List<NamedLock> chunk = locks.subList(from, Math.min(locks.size(), from + NAMES_PER_CHECK));
                long[] holders = SessionStatements.isUsedLocks(session.raw,
                        chunk.stream().map(lock -> lock.serverName).toList());
                SessionStatements.checkSameSession(session, holders[0]);
                for (int i = 0; i < chunk.size(); i++) {
                    long holder = holders[i + 2];
                    if (holder != session.connectionId) {
                        NamedLock lock = chunk.get(i);
                        session.held.remove(lock.serverName);
                        local.remove(lock.serverName, lock);
                        lose(lock, LockLostException.Reason.NOT_HELD, "Lock '" + lock.name + "' was lost: the server"
                                + " shows it " + (holder == 0 ? "free" : "held by connection " + holder)
                                + ", not by this instance's session " + session.connectionId, null);
                    }
                }
            }
        } catch (SQLException e) {
            if (!endedBy(session, e)) {
                LOG.warnf("Checking a lock connection (server session %d) failed, it is checked again next period: %s",
                        session.connectionId, SqlErrors.describe(e));
                return true;
            }
            failSession(session, e);
            return false;
        }
        if (session.held.isEmpty()) {
            discardLocked(session);
        }
        return true;
    }

    // --- queries ---

    @Override
    public boolean isLocked(String name, String serverName) {
        NamedLock mine = local.get(serverName);
        if (mine != null && mine.isHeld()) {
            return true;
        }
        return serverHolder(name, serverName) != null;
    }

    @Override
    public Optional<LockInfo> inspect(String name, String serverName) {
        NamedLock mine = local.get(serverName);
        if (mine != null && mine.isHeld()) {
            return Optional.of(info(mine));
        }
        Long holder = serverHolder(name, serverName);
        return holder == null ? Optional.empty()
                : Optional.of(new LockInfo(name, "server connection " + holder, null, 0, LockMode.NAMED));
    }

    @Override
    public List<LockInfo> held() {
        List<LockInfo> infos = new ArrayList<>();
        for (NamedLock lock : local.values()) {
            if (lock.isHeld()) {
                infos.add(info(lock));
            }
        }
        return infos;
    }

    private LockInfo info(NamedLock lock) {
        return new LockInfo(lock.name, describeLocal(lock), lock.since, lock.fence, LockMode.NAMED);
    }

    private Long serverHolder(String name, String serverName) {
        ensureOpen();
        return connections.query(name, "read the state of lock '" + name + "'",
                raw -> SessionStatements.holderOf(raw, serverName));
    }

    @Override
    public List<LockInfo> holders() {
        ensureOpen();
        Map<String, Long> onServer = connections.query("(holders)", "list the lock holders", this::namedLocksOnServer);
        Map<Long, PinnedSession> ours = new HashMap<>();
        for (PinnedSession session : sessions) {
            ours.put(session.connectionId, session);
        }
        List<LockInfo> infos = new ArrayList<>();
        for (Map.Entry<String, Long> entry : new TreeMap<>(onServer).entrySet()) {
            NamedLock mine = local.get(entry.getKey());
            if (mine != null && mine.isHeld() && ours.containsKey(entry.getValue())) {
                infos.add(new LockInfo(entry.getKey(), describeLocal(mine), mine.since, mine.fence, LockMode.NAMED));
            } else {
                infos.add(new LockInfo(entry.getKey(), "server connection " + entry.getValue(), null, 0, LockMode.NAMED));
            }
        }
        return infos;
    }

    /**
     * Named locks and their holders' connection ids: from the server's lock tables where it has them, else the names the
     * lock table knows, each checked with {@code IS_USED_LOCK}.
     */
    private Map<String, Long> namedLocksOnServer(Connection raw) throws SQLException {
        // MySQL 5.7+ (and MariaDB 10.5.2+ when the metadata lock instrument is enabled)
        Map<String, Long> held = namedLocksFrom(raw, "SELECT m.OBJECT_NAME, t.PROCESSLIST_ID"
                + " FROM performance_schema.metadata_locks m JOIN performance_schema.threads t"
                + " ON t.THREAD_ID = m.OWNER_THREAD_ID WHERE m.OBJECT_TYPE = 'USER LEVEL LOCK' AND m.LOCK_STATUS = 'GRANTED'");
        if (held != null && (!held.isEmpty() || metadataLocksInstrumented(raw))) {
            return held;
        }
        // MariaDB with the metadata_lock_info plugin
        held = namedLocksFrom(raw, "SELECT TABLE_SCHEMA, THREAD_ID FROM information_schema.METADATA_LOCK_INFO"
                + " WHERE LOCK_TYPE = 'User lock'");
        return held != null ? held : namedLocksOfKnownNames(raw);
    }

    /** The named locks a server table lists, or null if the server has no such table or does not let us read it. */
    private static Map<String, Long> namedLocksFrom(Connection raw, String sql) throws SQLException {
        Map<String, Long> held = new HashMap<>();
        try (Statement statement = raw.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            while (rs.next()) {
                held.put(rs.getString(1), rs.getLong(2));
            }
            return held;
        } catch (SQLException e) {
            if (SqlErrors.isConnectionFailure(e)) {
                throw e;
            }
            LOG.debugf("Cannot list named locks with [%s]: %s", sql, e.getMessage());
            return null;
        }
    }

    private static boolean metadataLocksInstrumented(Connection raw) throws SQLException {
        Map<String, Long> enabled = namedLocksFrom(raw, "SELECT NAME, 1 FROM performance_schema.setup_instruments"
                + " WHERE NAME = 'wait/lock/metadata/sql/mdl' AND ENABLED = 'YES'");
        return enabled != null && !enabled.isEmpty();
    }

    private Map<String, Long> namedLocksOfKnownNames(Connection raw) throws SQLException {
        List<String> names = new ArrayList<>();
        try (Statement statement = raw.createStatement();
                ResultSet rs = statement.executeQuery("SELECT name FROM " + table.name()
                        + " WHERE name NOT LIKE '~%' ORDER BY name")) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        } catch (SQLException e) {
            if (!SqlErrors.isMissingTable(e)) {
                throw e;
            }
        }
        for (NamedLock lock : local.values()) {
            if (!names.contains(lock.serverName)) {
                names.add(lock.serverName);
            }
        }
        Map<String, Long> held = new HashMap<>();
        for (int from = 0; from < names.size(); from += NAMES_PER_CHECK) {
            List<String> chunk = names.subList(from, Math.min(names.size(), from + NAMES_PER_CHECK));
            long[] holders = SessionStatements.isUsedLocks(raw, chunk);
            for (int i = 0; i < chunk.size(); i++) {
                if (holders[i + 2] != 0) {
                    held.put(chunk.get(i), holders[i + 2]);
                }
            }
        }
        return held;
    }

    @Override
    public boolean forceRelease(String name, String serverName) {
        throw new UnsupportedOperationException("forceRelease is for the LEASE engine. Named lock '" + name
                + "' belongs to a server session, which the server alone can end: KILL <connection id> ends it (inspect()"
                + " names the holder's connection), and its holder is told through onLost");
    }

    @Override
    public EngineHealth health() {
        Map<String, Object> data = new LinkedHashMap<>();
        try {
            long start = System.nanoTime();
            connections.query("(health)", "check the lock database", raw -> {
                try (Statement statement = raw.createStatement(); ResultSet rs = statement.executeQuery("SELECT 1")) {
                    return rs.next();
                }
            });
            data.put("database round trip ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        } catch (RuntimeException e) {
            return EngineHealth.down("the lock database does not answer: " + e.getMessage(), data);
        }
        int checked = 0;
        int failed = 0;
        int busy = 0;
        for (PinnedSession session : sessions) {
            if (!session.mutex.tryLock()) {
                busy++; // in a statement, which itself fails if the session is gone
                continue;
            }
            try {
                if (!session.retired && !session.held.isEmpty()) {
                    checked++;
                    if (!check(session)) {
                        failed++;
                    }
                }
            } finally {
                session.mutex.unlock();
            }
        }
        data.put("locks held by this instance", local.size());
        data.put("pinned connections", sessions.size());
        data.put("pinned connections checked", checked);
        data.put("pinned connections in a statement", busy);
        return failed == 0 ? EngineHealth.up(data)
                : EngineHealth.down(failed + " pinned connection(s) failed their check: their locks were lost, and their"
                        + " holders told through onLost", data);
    }

    /** The number of connections this engine keeps out of the pool now. */
    public int pinnedConnections() {
        return sessions.size();
    }

    /** What each connection kept out of the pool holds and why it is kept, for diagnostics. */
    public List<String> describePinned() {
        List<String> described = new ArrayList<>();
        for (PinnedSession session : sessions) {
            described.add("server session " + session.connectionId
                    + (session.shared ? shared.contains(session) ? ", shared" : ", shared but not listed as such" : "")
                    + (session.affinity == null ? "" : ", of thread '" + session.affinity.getName() + "'")
                    + (session.retired ? ", retired" : "") + (session.checking.get() ? ", being checked" : "")
                    + (session.mutex.isLocked() ? ", in a statement" : "") + ", idle for "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - session.lastUsed) + " ms, holding "
                    + List.copyOf(session.held.keySet()));
        }
        return described;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("The lock manager is shut down");
        }
    }

    // --- shutdown ---

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        keepalive.shutdownNow();
        checks.shutdownNow();
        for (PinnedSession session : List.copyOf(sessions)) {
            closeSession(session);
        }
        membership.leave();
        notifier.close();
        connections.close();
    }

    private void closeSession(PinnedSession session) {
        boolean locked;
        try {
            locked = session.mutex.tryLock(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            locked = false;
        }
        if (!locked) {
            // A statement is still running on it (a long wait): end the session under it, and tell its holders.
            abandonBusy(session, LockLostException.Reason.SHUTDOWN, "the application is shutting down");
            return;
        }
        try {
            if (session.retired) {
                return;
            }
            List<NamedLock> held = new ArrayList<>(session.held.values());
            session.held.clear();
            for (NamedLock lock : held) {
                local.remove(lock.serverName, lock);
                lose(lock, LockLostException.Reason.SHUTDOWN,
                        "Lock '" + lock.name + "' was released because the application is shutting down", null);
            }
            giveBackEmpty(session, false);
        } finally {
            session.mutex.unlock();
        }
    }
}
