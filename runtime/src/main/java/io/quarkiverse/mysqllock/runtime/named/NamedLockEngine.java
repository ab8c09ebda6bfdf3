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
import java.util.TreeMap;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

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
 * A thread's locks share one pinned session, so that the server sees, and breaks, deadlocks between threads that
 * each hold one lock and wait for another's. Re-entrant acquisitions by the owner thread are counted here and never
 * reach the server. A session goes back to the pool only after the server confirmed it holds no named lock
 * ({@code RELEASE_ALL_LOCKS() = 0}); a session whose state is in doubt is destroyed, which frees its locks on the server.
 */
public final class NamedLockEngine implements LockEngine, HoldEngine<NamedLock> {

    private static final Logger LOG = Logger.getLogger(NamedLockEngine.class);
    /** How often a server without fractional waits (MySQL) is polled for the sub-second rest of a wait. */
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** Head room above a wait for the socket read timeout, so the driver does not give up on the server first. */
    private static final int NETWORK_TIMEOUT_MARGIN_MILLIS = 10_000;
    private static final int NAMES_PER_CHECK = 200;
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;

    private final ConnectionSource connections;
    private final LockTable table;
    private final String identity;
    private final ServerFlavor configuredFlavor;
    private volatile Boolean fractionalWaits;
    private volatile boolean releaseAllSupported = true;
    private volatile boolean closed;

    private final ConcurrentHashMap<String, NamedLock> local = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Thread, PinnedSession> affinity = new ConcurrentHashMap<>();
    private final Set<PinnedSession> sessions = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService keepalive;
    private final LossNotifier notifier;

    public NamedLockEngine(ConnectionSource connections, LockTable table, String identity, ServerFlavor flavor,
            Duration keepaliveInterval, LockMetrics metrics) {
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
        // A non-reentrant hold has no owner thread: it gets a session of its own and nothing nests onto it.
        Thread me = reentrant ? Thread.currentThread() : null;
        for (int attempt = 1;; attempt++) {
            PinnedSession session = me == null ? null : lockAffineSession(me);
            boolean fresh = false;
            if (session != null) {
                NamedLock mine = session.held.get(serverName);
                if (mine != null && mine.isHeld()) {
                    mine.holds++;
                    session.mutex.unlock();
                    return new LockHold<>(mine, this);
                }
            } else {
                session = pin(name, me, deadline - System.nanoTime());
                fresh = true;
            }
            try {
                return acquireOn(session, fresh, name, serverName, start, deadline, throwIfBusy);
            } catch (SQLException e) {
                Duration waited = Duration.ofNanos(System.nanoTime() - start);
                if (SqlErrors.isDeadlock(e)) {
                    // The server refused this wait only; the session keeps every lock it held.
                    retireIfEmpty(session);
                    throw new LockNotAcquiredException(name, waited, Reason.DEADLOCK, null, "Lock '" + name
                            + "' was not acquired: the server detected a deadlock. This thread holds other locks and"
                            + " the holder of '" + name + "' waits for one of them. Acquire locks in one global order,"
                            + " or release and retry: " + SqlErrors.describe(e), e);
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

    private LockHandle acquireOn(PinnedSession session, boolean fresh, String name, String serverName, long start,
            long deadline, boolean throwIfBusy) throws SQLException {
        Grant grant = getLock(session, serverName, deadline);
        if (grant == Grant.GRANTED) {
            NamedLock lock = new NamedLock(name, serverName, session, session.affinity, Instant.now());
            session.held.put(serverName, lock);
            local.put(serverName, lock);
            if (fresh) {
                if (session.affinity != null) {
                    affinity.put(session.affinity, session);
                }
                sessions.add(session);
            }
            if (closed) {
                releaseLocked(lock);
                throw new IllegalStateException("The lock manager is shut down");
            }
            return new LockHold<>(lock, this);
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        if (grant == Grant.INTERRUPTED) {
            retireIfEmpty(session);
            throw new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null, "Lock '" + name
                    + "' was not acquired: the server interrupted the wait (GET_LOCK returned NULL, as after KILL QUERY)",
                    null);
        }
        String holder = throwIfBusy ? describeHolder(session, serverName) : null;
        retireIfEmpty(session);
        if (!throwIfBusy) {
            return null;
        }
        throw new LockNotAcquiredException(name, waited, Reason.BUSY, holder, "Lock '" + name + "' is held by "
                + (holder == null ? "another session" : holder) + "; not acquired within " + waited.toMillis() + " ms",
                null);
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
    private PinnedSession pin(String name, Thread me, long remainingNanos) {
        Connection pooled = connections.borrow(name, remainingNanos);
        try {
            Connection raw = ConnectionSource.raw(pooled);
            boolean autoCommitWasOff = !raw.getAutoCommit();
            if (autoCommitWasOff) {
                raw.setAutoCommit(true);
            }
            if (fractionalWaits == null) {
                fractionalWaits = detectFractionalWaits(raw);
            }
            PinnedSession session = new PinnedSession(pooled, raw, me, autoCommitWasOff, raw.getNetworkTimeout());
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
        boolean last = session.held.isEmpty();
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
        if (!session.retired && session.held.isEmpty()) {
            retire(session);
        }
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
        sessions.remove(session);
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
            try (Statement statement = session.raw.createStatement()) {
                statement.execute(releaseAllSupported ? "SELECT RELEASE_ALL_LOCKS()" : "SELECT 1");
            } catch (SQLException e) {
                discardLocked(session);
                return;
            }
            if (releaseAllSupported) {
                retire(session);
            } else {
                discardLocked(session);
            }
        } finally {
            session.mutex.unlock();
        }
    }
}
