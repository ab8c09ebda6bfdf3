package io.quarkiverse.mysqllock.runtime.named;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.LossNotifier;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/**
 * How a pinned session ends. It goes back to the pool only after the server confirmed it holds no named lock
 * ({@code RELEASE_ALL_LOCKS()}); a session whose state is in doubt is destroyed, which frees its locks on the server,
 * and every lock on it is reported lost first. The methods on one session expect its mutex held; {@link #abandonAll}
 * and {@link #closeAll} take each session's mutex themselves, or end a session under the statement that holds it.
 */
final class SessionLifecycle {

    private static final Logger LOG = Logger.getLogger(NamedLockEngine.class);

    private final ConnectionSource connections;
    private final SessionStatements statements;
    private final LossNotifier notifier;
    private final NameRegistry names;
    private final PinnedSessions pinned;
    private final SharedSessions shared;
    /** False once the server showed it has no {@code RELEASE_ALL_LOCKS()}: sessions are then destroyed, not given back. */
    private volatile boolean releaseAllSupported = true;

    SessionLifecycle(ConnectionSource connections, SessionStatements statements, LossNotifier notifier,
            NameRegistry names, PinnedSessions pinned, SharedSessions shared) {
        this.connections = connections;
        this.statements = statements;
        this.notifier = notifier;
        this.names = names;
        this.pinned = pinned;
        this.shared = shared;
    }

    boolean releaseAllSupported() {
        return releaseAllSupported;
    }

    /** The server has no {@code RELEASE_ALL_LOCKS()} (MariaDB before 10.5.2). */
    void releaseAllUnsupported() {
        releaseAllSupported = false;
    }

    /** A thread's own session that holds nothing goes back to the pool; the mutex is held. */
    void retireIfEmpty(PinnedSession session) {
        if (!session.retired && session.held().isEmpty() && !session.shared) {
            retire(session);
        }
    }

    /**
     * Returns a session to the pool once the server released whatever it still held ({@code RELEASE_ALL_LOCKS()}), or
     * destroys it; the mutex is held.
     *
     * @param heldNone the session should hold no lock: warn about any the server released
     */
    void giveBackEmpty(PinnedSession session, boolean heldNone) {
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
    void retire(PinnedSession session) {
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
        } catch (SQLException | RuntimeException e) {
            connections.discard(session.pooled);
            return;
        }
        connections.giveBack(session.pooled);
    }

    /** Destroys the session, which frees on the server whatever it still holds; the mutex is held. */
    void discardLocked(PinnedSession session) {
        session.retired = true;
        forget(session);
        if (session.handedBack.compareAndSet(false, true)) {
            connections.discard(session.pooled);
        }
    }

    private void forget(PinnedSession session) {
        if (pinned.remove(session) && session.shared) {
            shared.forget(session);
        }
        pinned.forgetOwner(session);
    }

    /** The session is broken or in doubt: every lock on it is lost, and it is destroyed. The mutex is held. */
    void failSession(PinnedSession session, SQLException cause) {
        failSession(session, LockLostException.Reason.CONNECTION_LOST,
                "its connection (server session " + session.connectionId + ") failed: " + SqlErrors.describe(cause), cause);
    }

    /**
     * The session's server is read-only: a replica, or a primary demoted by a failover that the session still reaches.
     * Named locks there are invisible to the writable server, where others may now take them: every lock of the session
     * is lost, the session destroyed, and the pool's connections replaced. The mutex is held.
     */
    void failSessionReadOnly(PinnedSession session) {
        failSession(session, LockLostException.Reason.READ_ONLY, "its connection (server session "
                + session.connectionId + ") reaches a read-only server: a replica, or a primary demoted by a failover,"
                + " where named locks are invisible to the writable server", null);
        connections.readOnlyFound("named lock connection " + session.connectionId);
    }

    private void failSession(PinnedSession session, LockLostException.Reason reason, String why, Throwable cause) {
        List<NamedLock> lost = new ArrayList<>(session.held().values());
        session.held().clear();
        // Told first: once the connection ends, the server frees the locks for others.
        for (NamedLock lock : lost) {
            names.remove(lock.serverName, lock);
            notifier.lose(lock, reason, "Lock '" + lock.name + "' was lost: " + why, cause);
        }
        discardLocked(session);
    }

    /**
     * Every lock of every session is lost and every session ended (a session busy in a statement is ended under it):
     * the server frees the locks, so that nothing stays held that its holders were told they lost.
     */
    void abandonAll(LockLostException.Reason reason, String why) {
        for (PinnedSession session : List.copyOf(pinned.all())) {
            abandon(session, reason, why);
        }
    }

    /**
     * Every lock of the session is lost and the session ended (under the statement that holds it, if one does): the
     * server frees its locks, so that nothing stays held that its holders were told they lost.
     */
    void abandon(PinnedSession session, LockLostException.Reason reason, String why) {
        PinnedSession.Guard locked = session.tryLock();
        if (locked != null) {
            try (locked) {
                if (!session.retired) {
                    failSession(session, reason, why, null);
                }
            }
        } else {
            abandonBusy(session, reason, why);
        }
    }

    /**
     * Ends a session whose mutex a statement holds, under it, and tells the holders of its locks; the statement's own
     * grant, if it gets one, is void ({@link SessionGrants#register}).
     */
    private void abandonBusy(PinnedSession session, LockLostException.Reason reason, String why) {
        session.retired = true;
        forget(session);
        for (NamedLock lock : List.copyOf(names.values())) {
            if (lock.session == session && names.remove(lock.serverName, lock)) {
                notifier.lose(lock, reason, "Lock '" + lock.name + "' was lost: " + why, null);
            }
        }
        if (session.handedBack.compareAndSet(false, true)) {
            connections.discard(session.pooled);
        }
    }

    /**
     * At shutdown: every session's locks are reported released, and the session given back or destroyed; a session
     * whose mutex a statement still holds after a second is ended under it.
     */
    void closeAll() {
        for (PinnedSession session : List.copyOf(pinned.all())) {
            closeSession(session);
        }
    }

    private void closeSession(PinnedSession session) {
        PinnedSession.Guard locked = lockWithinASecond(session);
        if (locked == null) {
            // A statement is still running on it (a long wait): end the session under it, and tell its holders.
            abandonBusy(session, LockLostException.Reason.SHUTDOWN, "the application is shutting down");
            return;
        }
        try (locked) {
            if (session.retired) {
                return;
            }
            List<NamedLock> held = new ArrayList<>(session.held().values());
            session.held().clear();
            for (NamedLock lock : held) {
                names.remove(lock.serverName, lock);
                notifier.lose(lock, LockLostException.Reason.SHUTDOWN,
                        "Lock '" + lock.name + "' was released because the application is shutting down", null);
            }
            giveBackEmpty(session, false);
        }
    }

    /** The session's lock if it comes free within a second; null otherwise, or when interrupted (the flag kept). */
    private static PinnedSession.Guard lockWithinASecond(PinnedSession session) {
        try {
            return session.tryLock(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
