package io.quarkiverse.mysqllock.runtime.named;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
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
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.EngineHealth;
import io.quarkiverse.mysqllock.runtime.HoldEngine;
import io.quarkiverse.mysqllock.runtime.LockHold;
import io.quarkiverse.mysqllock.runtime.LockMetrics;
import io.quarkiverse.mysqllock.runtime.LossNotifier;
import io.quarkiverse.mysqllock.runtime.LockEngine;
import io.quarkiverse.mysqllock.runtime.LockTable;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.ServerFlavor;
import io.quarkiverse.mysqllock.runtime.SqlErrors;
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
    /** How often a server without fractional waits (MySQL) is polled for the sub-second rest of a wait. */
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** Head room above a wait for the socket read timeout, so the driver does not give up on the server first. */
    private static final int NETWORK_TIMEOUT_MARGIN_MILLIS = 10_000;
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
    private final ServerFlavor configuredFlavor;
    private volatile Boolean fractionalWaits;
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
    private final ScheduledExecutorService keepalive;
    private final LossNotifier notifier;

    public NamedLockEngine(ConnectionSource connections, LockTable table, String identity, ServerFlavor flavor,
            Duration keepaliveInterval, int sharedConnections, LockMetrics metrics) {
        this.notifier = new LossNotifier(metrics, LockMode.NAMED);
        this.connections = connections;
        this.table = table;
        this.identity = identity;
        this.configuredFlavor = flavor;
        if (flavor != ServerFlavor.AUTO) {
            this.fractionalWaits = flavor == ServerFlavor.MARIADB;
        }
        this.keepalive = Executors.newSingleThreadScheduledExecutor(ConnectionSource.daemonThreads("mysql-lock-keepalive-"));
        long period = keepaliveInterval.toNanos();
        keepalive.scheduleWithFixedDelay(this::checkSessions, period, period, TimeUnit.NANOSECONDS);
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
    public LockHandle acquire(String name, String serverName, long waitNanos, boolean throwIfBusy, boolean reentrant,
            long leaseCapNanos) {
        ensureOpen();
        long start = System.nanoTime();
        long deadline = start + waitNanos;
        // A non-reentrant hold has no owner thread: nothing nests onto it, and it never uses a thread's own session.
        Thread me = reentrant ? Thread.currentThread() : null;
        if (me != null) {
            LockHandle nested = nest(me, serverName);
            if (nested != null) {
                return nested;
            }
        }
        if (sharedLimit > 0 && (me == null || !affinity.containsKey(me))
                && (waitNanos == 0 || !recentlyContended(serverName, start))) {
            Attempt shared = tryShared(name, serverName, me, deadline, waitNanos == 0 && throwIfBusy);
            if (shared.handle != null) {
                return shared.handle;
            }
            if (waitNanos == 0) {
                return busy(name, start, throwIfBusy, shared.holder);
            }
        }
        return acquireOnOwnSession(name, serverName, me, start, deadline, throwIfBusy);
    }

    /** A nested hold on the lock the thread already holds, or null if it holds none by that name. */
    private LockHandle nest(Thread me, String serverName) {
        NamedLock mine = local.get(serverName);
        if (mine == null || mine.owner != me) {
            return null;
        }
        PinnedSession session = mine.session;
        session.mutex.lock();
        try {
            if (!mine.isHeld() || session.retired) {
                return null;
            }
            mine.holds++;
            return new LockHold<>(mine, this);
        } finally {
            session.mutex.unlock();
        }
    }

    private record Attempt(LockHandle handle, String holder) {
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
                session.lastUsed = System.nanoTime();
                Grant grant = getLock(session, serverName, BigDecimal.ZERO, 0);
                if (grant == Grant.GRANTED) {
                    return new Attempt(register(session, name, serverName, me), null);
                }
                if (grant == Grant.INTERRUPTED) {
                    throw interrupted(name, Duration.ZERO);
                }
                if (contended.size() >= MAX_CONTENDED) {
                    contended.clear();
                }
                contended.put(serverName, System.nanoTime());
                return new Attempt(null, describe ? describeHolder(session, serverName) : null);
            } catch (SQLException e) {
                if (session != null) {
                    failSession(session, e);
                }
                // A shared connection that died (server restart, KILL) is replaced; its locks were reported lost.
                if (!SqlErrors.isConnectionFailure(e) || attempt >= MAX_STALE_CONNECTIONS) {
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

    /** Records a lock the server granted on the session; the mutex is held. */
    private LockHandle register(PinnedSession session, String name, String serverName, Thread owner) {
        NamedLock lock = new NamedLock(name, serverName, session, owner, Instant.now());
        session.held.put(serverName, lock);
        local.put(serverName, lock);
        if (closed) {
            releaseLocked(lock);
            throw new IllegalStateException("The lock manager is shut down");
        }
        return new LockHold<>(lock, this);
    }

    private LockHandle busy(String name, long start, boolean throwIfBusy, String holder) {
        if (!throwIfBusy) {
            return null;
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        throw new LockNotAcquiredException(name, waited, Reason.BUSY, holder, "Lock '" + name + "' is held by "
                + (holder == null ? "another session" : holder) + "; not acquired within " + waited.toMillis() + " ms",
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
    private LockHandle acquireOnOwnSession(String name, String serverName, Thread me, long start, long deadline,
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

    private LockHandle ownSession(String name, String serverName, Thread me, long start, long deadline,
            boolean throwIfBusy) {
        for (int attempt = 1;; attempt++) {
            PinnedSession session = me == null ? null : lockAffineSession(me);
            boolean fresh = false;
            if (session == null) {
                session = pin(name, me, false, connections.budgetNanos(deadline - System.nanoTime()));
                fresh = true;
            }
            try {
                return acquireOn(session, fresh, name, serverName, start, deadline, throwIfBusy);
            } catch (SQLException e) {
                Duration waited = Duration.ofNanos(System.nanoTime() - start);
                if (SqlErrors.isDeadlock(e)) {
                    // The server refused this wait only; the session keeps every lock it held.
                    retireIfEmpty(session);
                    throw deadlock(name, waited, "the server detected a deadlock", e);
                }
                failSession(session, e);
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

    private LockHandle acquireOn(PinnedSession session, boolean fresh, String name, String serverName, long start,
            long deadline, boolean throwIfBusy) throws SQLException {
        Grant grant = getLock(session, serverName, deadline);
        if (grant == Grant.GRANTED) {
            if (fresh) {
                if (session.affinity != null) {
                    affinity.put(session.affinity, session);
                }
                sessions.add(session);
            }
            return register(session, name, serverName, session.affinity);
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
                if (holder == null || holder.owner == null || !holder.isHeld()) {
                    break;
                }
                if (holder.owner == me) {
                    throw deadlock(name, Duration.ZERO, "this instance detected a deadlock among its threads", null);
                }
                next = waitingFor.get(holder.owner);
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

    /** The calling thread's session with its mutex held, or null if it has none that can still be used. */
    private PinnedSession lockAffineSession(Thread me) {
        PinnedSession session = affinity.get(me);
        if (session == null) {
            return null;
        }
        session.mutex.lock();
        if (session.retired) {
            session.mutex.unlock();
            return null;
        }
        return session;
    }

    /** Borrows a connection and makes it a session; returns with the session's mutex held. */
    private PinnedSession pin(String name, Thread me, boolean shared, long budgetNanos) {
        Connection pooled = connections.borrowWithin(name, budgetNanos);
        try {
            Connection raw = ConnectionSource.raw(pooled);
            boolean autoCommitWasOff = !raw.getAutoCommit();
            if (autoCommitWasOff) {
                raw.setAutoCommit(true);
            }
            if (fractionalWaits == null) {
                fractionalWaits = detectFractionalWaits(raw);
            }
            PinnedSession session = new PinnedSession(pooled, raw, me, shared, autoCommitWasOff,
                    raw.getNetworkTimeout());
            session.mutex.lock();
            return session;
        } catch (SQLException e) {
            connections.discard(pooled);
            throw new LockNotAcquiredException(name, Duration.ZERO, Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: preparing the lock connection failed: " + SqlErrors.describe(e),
                    e);
        }
    }

    private static boolean detectFractionalWaits(Connection raw) throws SQLException {
        try (Statement statement = raw.createStatement(); ResultSet rs = statement.executeQuery("SELECT VERSION()")) {
            rs.next();
            String version = rs.getString(1);
            boolean mariaDb = version != null && version.toLowerCase(Locale.ROOT).contains("mariadb");
            LOG.debugf("Lock server version %s: %s waits", version, mariaDb ? "fractional" : "whole-second");
            return mariaDb;
        }
    }

    private enum Grant {
        GRANTED,
        BUSY,
        INTERRUPTED
    }

    /**
     * Waits on the server. MariaDB honours fractional timeouts; MySQL truncates them to whole seconds, so there the
     * whole seconds are waited on the server and the rest is polled. Never a negative timeout: MySQL would wait forever.
     */
    private Grant getLock(PinnedSession session, String serverName, long deadline) throws SQLException {
        long remaining = Math.max(0, deadline - System.nanoTime());
        if (Boolean.TRUE.equals(fractionalWaits)) {
            return getLock(session, serverName, BigDecimal.valueOf(remaining / 1_000, 6), remaining);
        }
        Grant grant = getLock(session, serverName, BigDecimal.valueOf(remaining / 1_000_000_000L), remaining);
        while (grant == Grant.BUSY && (remaining = deadline - System.nanoTime()) > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(Math.min(remaining, POLL_NANOS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Grant.BUSY;
            }
            grant = getLock(session, serverName, BigDecimal.ZERO, 0);
        }
        return grant;
    }

    private Grant getLock(PinnedSession session, String serverName, BigDecimal seconds, long waitNanos)
            throws SQLException {
        int waitMillis = (int) Math.min(Integer.MAX_VALUE - NETWORK_TIMEOUT_MARGIN_MILLIS,
                TimeUnit.NANOSECONDS.toMillis(waitNanos));
        boolean raiseTimeout = session.originalNetworkTimeout > 0
                && session.originalNetworkTimeout < waitMillis + NETWORK_TIMEOUT_MARGIN_MILLIS;
        if (raiseTimeout) {
            session.raw.setNetworkTimeout(Runnable::run, waitMillis + NETWORK_TIMEOUT_MARGIN_MILLIS);
        }
        try {
            PreparedStatement statement = connections.statements().prepare(session.raw,
                    "SELECT GET_LOCK(?, ?), CONNECTION_ID()");
            statement.setString(1, serverName);
            statement.setBigDecimal(2, seconds);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                long result = rs.getLong(1);
                boolean isNull = rs.wasNull();
                checkSameSession(session, rs.getLong(2));
                return isNull ? Grant.INTERRUPTED : result == 1 ? Grant.GRANTED : Grant.BUSY;
            }
        } finally {
            if (raiseTimeout) {
                session.raw.setNetworkTimeout(Runnable::run, session.originalNetworkTimeout);
            }
        }
    }

    private static void checkSameSession(PinnedSession session, long connectionId) throws SQLException {
        if (session.connectionId == 0) {
            session.connectionId = connectionId;
        } else if (session.connectionId != connectionId) {
            throw new SQLException("The lock connection now talks to server session " + connectionId + " instead of "
                    + session.connectionId + ": it reconnected, and every named lock of the old session is gone", "08S01");
        }
    }

    private String describeHolder(PinnedSession session, String serverName) throws SQLException {
        NamedLock mine = local.get(serverName);
        if (mine != null && mine.isHeld()) {
            return describeLocal(mine);
        }
        try (PreparedStatement statement = session.raw.prepareStatement("SELECT IS_USED_LOCK(?)")) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                long id = rs.getLong(1);
                return rs.wasNull() ? null : "server connection " + id;
            }
        }
    }

    private String describeLocal(NamedLock lock) {
        return identity + " (server connection " + lock.session.connectionId
                + (lock.owner == null ? ", asynchronous" : ", thread '" + lock.owner.getName() + "'") + ")";
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
            if (--lock.holds > 0 || !lock.isHeld()) {
                return;
            }
            session.lastUsed = System.nanoTime();
            releaseLocked(lock);
        } finally {
            session.mutex.unlock();
        }
    }

    /** Releases the lock on the server; the session's mutex is held. */
    private void releaseLocked(NamedLock lock) {
        PinnedSession session = lock.session;
        lock.released = true;
        session.held.remove(lock.serverName);
        local.remove(lock.serverName, lock);
        if (session.retired) {
            return;
        }
        // A shared session stays pinned a moment for the next lock; a thread's own goes back with its last lock.
        boolean last = session.held.isEmpty() && !session.shared;
        boolean releaseAll = last && releaseAllSupported;
        try {
            PreparedStatement statement = connections.statements().prepare(session.raw,
                    releaseAll ? "SELECT RELEASE_LOCK(?), RELEASE_ALL_LOCKS()" : "SELECT RELEASE_LOCK(?)");
            statement.setString(1, lock.serverName);
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                if (rs.getInt(1) != 1) {
                    notifier.loseAtRelease(lock, LockLostException.Reason.NOT_HELD, "Lock '" + lock.name
                            + "' was lost before it was released: the server no longer held it for this instance's"
                            + " session " + session.connectionId, null);
                }
                if (releaseAll && rs.getInt(2) > 0) {
                    LOG.warnf("The connection of lock '%s' held %d other named lock(s) not taken through LockManager;"
                            + " they were released before the connection went back to the pool", lock.name, rs.getInt(2));
                }
            }
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
        if (last) {
            if (releaseAll) {
                retire(session);
            } else {
                discardLocked(session);
            }
        }
    }

    private void retireIfEmpty(PinnedSession session) {
        if (!session.retired && session.held.isEmpty() && !session.shared) {
            retire(session);
        }
    }

    /** Gives back the shared sessions that have held nothing for a moment. */
    private void giveBackIdleShared() {
        for (PinnedSession session : shared) {
            if (System.nanoTime() - session.lastUsed < LINGER_NANOS || !session.mutex.tryLock()) {
                continue;
            }
            try {
                if (!session.retired && session.held.isEmpty() && System.nanoTime() - session.lastUsed >= LINGER_NANOS) {
                    giveBackEmpty(session, true);
                }
            } catch (RuntimeException e) {
                LOG.error("Returning an idle lock connection failed", e);
            } finally {
                session.mutex.unlock();
            }
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
        try (Statement statement = session.raw.createStatement();
                ResultSet rs = statement.executeQuery("SELECT RELEASE_ALL_LOCKS()")) {
            rs.next();
            if (heldNone && rs.getInt(1) > 0) {
                LOG.warnf("A lock connection held %d named lock(s) not taken through LockManager; they were released"
                        + " before the connection went back to the pool", rs.getInt(1));
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

    /** Gives back a session that holds no named lock; the mutex is held. */
    private void retire(PinnedSession session) {
        session.retired = true;
        forget(session);
        try {
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
        connections.discard(session.pooled);
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
        List<NamedLock> lost = new ArrayList<>(session.held.values());
        session.held.clear();
        discardLocked(session);
        for (NamedLock lock : lost) {
            local.remove(lock.serverName, lock);
            lose(lock, LockLostException.Reason.CONNECTION_LOST, "Lock '" + lock.name + "' was lost: its connection"
                    + " (server session " + session.connectionId + ") failed: " + SqlErrors.describe(cause), cause);
        }
    }

    private void lose(NamedLock lock, LockLostException.Reason reason, String message, Throwable cause) {
        notifier.lose(lock, reason, message, cause);
    }

    // --- fencing ---

    @Override
    public long fencingToken(NamedLock lock) {
        PinnedSession session = lock.session;
        session.mutex.lock();
        try {
            if (lock.lost != null) {
                throw new LockLostException(lock.name, lock.lost.reason(),
                        "Lock '" + lock.name + "' is lost: no fencing token can be issued", lock.lost);
            }
            if (lock.released) {
                throw new IllegalStateException("Lock '" + lock.name + "' was released: it has no fencing token");
            }
            if (lock.fence == 0) {
                if (!BlockingOperationControl.isBlockingAllowed()) {
                    throw new IllegalStateException("The first fencingToken() of lock '" + lock.name + "' reads the"
                            + " database and was called on an event-loop thread. Call it on a worker thread (for a Uni:"
                            + " .emitOn(Infrastructure.getDefaultWorkerPool()) first)");
                }
                try {
                    lock.fence = table.nextFence(session.raw, lock.serverName);
                } catch (SQLException e) {
                    failSession(session, e);
                    throw new LockLostException(lock.name, LockLostException.Reason.CONNECTION_LOST,
                            "Lock '" + lock.name + "' is lost: its connection failed while issuing the fencing token: "
                                    + SqlErrors.describe(e),
                            e);
                }
            }
            return lock.fence;
        } finally {
            session.mutex.unlock();
        }
    }

    // --- keepalive ---

    private void checkSessions() {
        for (PinnedSession session : sessions) {
            if (!session.mutex.tryLock()) {
                continue; // busy in a statement, which itself would fail if the session were gone
            }
            try {
                if (!session.retired && !session.held.isEmpty()) {
                    check(session);
                }
            } catch (RuntimeException e) {
                LOG.error("Checking a lock connection failed", e);
            } finally {
                session.mutex.unlock();
            }
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
            long[] sampled = isUsedLocks(session.raw, List.of(sample.serverName));
            checkSameSession(session, sampled[0]);
            if (sampled[1] == session.connectionId) {
                return true;
            }
            for (int from = 0; from < locks.size(); from += NAMES_PER_CHECK) {
                List<NamedLock> chunk = locks.subList(from, Math.min(locks.size(), from + NAMES_PER_CHECK));
                long[] holders = isUsedLocks(session.raw, chunk.stream().map(lock -> lock.serverName).toList());
                checkSameSession(session, holders[0]);
                for (int i = 0; i < chunk.size(); i++) {
                    long holder = holders[i + 1];
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
        return connections.query(name, "read the state of lock '" + name + "'", raw -> {
            try (PreparedStatement statement = raw.prepareStatement("SELECT IS_USED_LOCK(?)")) {
                statement.setString(1, serverName);
                try (ResultSet rs = statement.executeQuery()) {
                    rs.next();
                    long id = rs.getLong(1);
                    return rs.wasNull() ? null : id;
                }
            }
        });
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
                ResultSet rs = statement.executeQuery("SELECT name FROM " + table.name() + " ORDER BY name")) {
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
            long[] holders = isUsedLocks(raw, chunk);
            for (int i = 0; i < chunk.size(); i++) {
                if (holders[i + 1] != 0) {
                    held.put(chunk.get(i), holders[i + 1]);
                }
            }
        }
        return held;
    }

    /**
     * One statement: the session's {@code CONNECTION_ID()}, then for each name the connection holding it
     * ({@code IS_USED_LOCK}), 0 when it is free.
     */
    private static long[] isUsedLocks(Connection raw, List<String> serverNames) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT CONNECTION_ID()");
        for (int i = 0; i < serverNames.size(); i++) {
            sql.append(", IS_USED_LOCK(?)");
        }
        try (PreparedStatement statement = raw.prepareStatement(sql.toString())) {
            for (int i = 0; i < serverNames.size(); i++) {
                statement.setString(i + 1, serverNames.get(i));
            }
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                long[] result = new long[serverNames.size() + 1];
                for (int i = 0; i < result.length; i++) {
                    result[i] = rs.getLong(i + 1); // NULL reads as 0; connection ids start at 1
                }
                return result;
            }
        }
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
        for (PinnedSession session : List.copyOf(sessions)) {
            closeSession(session);
        }
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
            // A statement is still running on it (a long wait): end the session under it.
            connections.discard(session.pooled);
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
