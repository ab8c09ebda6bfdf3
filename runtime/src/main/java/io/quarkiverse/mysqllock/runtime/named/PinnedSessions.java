package io.quarkiverse.mysqllock.runtime.named;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;

/**
 * Every connection this engine keeps out of the pool: borrowed and made a session here, and listed from then until
 * {@link SessionLifecycle} retires or discards it, so that the keepalive checks it and a lapse or the shutdown ends it.
 * <p>
 * Also each thread's own session: a thread waits on a session of its own, and keeps using it while it holds locks
 * there, so that the server sees (and breaks) deadlocks between the locks on it. A session is its thread's from its
 * first grant until it is retired or discarded.
 */
final class PinnedSessions {

    private final ConnectionSource connections;
    private final SessionStatements statements;
    private final Set<PinnedSession> sessions = ConcurrentHashMap.newKeySet();
    private final Set<PinnedSession> view = Collections.unmodifiableSet(sessions);
    private final ConcurrentHashMap<Thread, PinnedSession> own = new ConcurrentHashMap<>();

    PinnedSessions(ConnectionSource connections, SessionStatements statements) {
        this.connections = connections;
        this.statements = statements;
    }

    /**
     * Borrows a connection and makes it a session, every statement on it bounded by statement-timeout; returns with the
     * session locked ({@link PinnedSession#lock}). It is listed only once {@link #add} is called.
     */
    PinnedSession.Guard pin(String name, Thread me, boolean shared, long budgetNanos) {
        Connection pooled = connections.borrowWithin(name, budgetNanos);
        try {
            Connection raw = ConnectionSource.raw(pooled);
            int networkTimeout = raw.getNetworkTimeout();
            Statements.bound(raw, connections.statementTimeoutMillis());
            boolean autoCommitWasOff = !raw.getAutoCommit();
            if (autoCommitWasOff) {
                raw.setAutoCommit(true);
            }
            PinnedSession session = new PinnedSession(pooled, raw, statements.server(raw), me, shared, autoCommitWasOff,
                    networkTimeout);
            return session.lock();
        } catch (SQLException e) {
            connections.discard(pooled);
            throw new LockNotAcquiredException(name, Duration.ZERO, Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: preparing the lock connection failed: " + SqlErrors.describe(e),
                    e);
        } catch (RuntimeException e) {
            connections.discard(pooled); // in an unknown state: never back to the pool
            throw new LockNotAcquiredException(name, Duration.ZERO, Reason.DATABASE_ERROR, null,
                    "Lock '" + name + "' was not acquired: preparing the lock connection failed: " + e, e);
        }
    }

    void add(PinnedSession session) {
        sessions.add(session);
    }

    /** Whether the session was listed (it is not any more). */
    boolean remove(PinnedSession session) {
        return sessions.remove(session);
    }

    /** A live, unmodifiable view of the pinned sessions; iterating it is weakly consistent. */
    Set<PinnedSession> all() {
        return view;
    }

    int size() {
        return sessions.size();
    }

    // --- each thread's own session ---

    /** Whether the thread has a session of its own now: its further locks then go there, never to a shared one. */
    boolean hasOwn(Thread thread) {
        return own.containsKey(thread);
    }

    /** The session's first lock was granted: the thread's further locks go there. */
    void makeOwn(Thread thread, PinnedSession session) {
        own.put(thread, session);
    }

    /** The session is retired or discarded: its thread no longer has it. */
    void forgetOwner(PinnedSession session) {
        if (session.affinity != null) {
            own.remove(session.affinity, session);
        }
    }

    /**
     * The calling thread's own session, locked ({@link PinnedSession#lock}), or null if it has none that can still be
     * used for this name: a session that holds the name already (for a hold the thread's call no longer owns, such as
     * one waiting for its late release) would grant it again, since named locks are re-entrant per session.
     */
    PinnedSession.Guard lockOwn(Thread me, String serverName) {
        PinnedSession session = own.get(me);
        if (session == null) {
            return null;
        }
        PinnedSession.Guard locked = session.lock();
        if (session.retired || session.held().containsKey(serverName)) {
            locked.close();
            return null;
        }
        return locked;
    }
}
