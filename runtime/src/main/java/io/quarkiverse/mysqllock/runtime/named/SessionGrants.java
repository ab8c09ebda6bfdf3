package io.quarkiverse.mysqllock.runtime.named;

import java.sql.SQLException;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.GrantingEngine;
import io.quarkiverse.mysqllock.runtime.engine.HoldCaps;
import io.quarkiverse.mysqllock.runtime.engine.HoldHandle;
import io.quarkiverse.mysqllock.runtime.engine.LossNotifier;
import io.quarkiverse.mysqllock.runtime.fleet.Membership;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * A granted lock's life on its session, under the session's mutex: registered where the in-JVM exclusion sees it,
 * valid while this instance's membership of its fleet is confirmed, released on the server with its last hold, after
 * which a thread's own session that holds nothing goes back to the pool.
 */
final class SessionGrants {

    private static final Logger LOG = Logger.getLogger(NamedLockEngine.class);

    private final ConnectionSource connections;
    private final SessionStatements statements;
    private final LossNotifier notifier;
    /** This instance's membership of its fleet: locks are granted, and valid, only while it is confirmed. */
    private final Membership membership;
    private final NameRegistry names;
    private final SessionLifecycle lifecycle;
    /** The engine, which the handles made here call back to release their holds ({@link GrantingEngine} only). */
    private final GrantingEngine<NamedLock> engine;

    SessionGrants(ConnectionSource connections, SessionStatements statements, LossNotifier notifier, Membership membership,
            NameRegistry names, SessionLifecycle lifecycle, GrantingEngine<NamedLock> engine) {
        this.connections = connections;
        this.statements = statements;
        this.notifier = notifier;
        this.membership = membership;
        this.names = names;
        this.lifecycle = lifecycle;
        this.engine = engine;
    }

    /**
     * Records a lock the server granted on the session; the mutex is held. The grant is void if the session was ended
     * under the statement (a lapse abandons busy sessions), and is given back if the membership is not confirmed now.
     */
    ControlledHandle register(PinnedSession session, String name, String serverName, Thread owner)
            throws SQLException {
        NamedLock lock = new NamedLock(name, serverName, session, Instant.now());
        session.held().put(serverName, lock);
        NamedLock displaced = names.put(serverName, lock);
        if (displaced != null && displaced != lock && displaced.lost == null) {
            // The server granted the name to this session: another session of this instance no longer holds it (ended
            // on the server, not found out yet). Its holder is told now; left in the map, a later end of its session
            // under a statement (a lapse) would not have found it, and it would never have been told.
            notifier.lose(displaced, LockLostException.Reason.NOT_HELD, "Lock '" + displaced.name + "' was lost: the"
                    + " server granted it to another session of this instance (" + session.connectionId + "), so its own"
                    + " (server session " + displaced.session.connectionId + ") no longer held it", null);
        }
        // Read after the lock is visible: an abandonment either sees the lock (and reports it) or is seen here.
        if (session.retired) {
            session.held().remove(serverName, lock);
            names.remove(serverName, lock);
            // ended under the statement: the server freed whatever it granted, or will
            throw new SQLException("The lock connection was ended while its GET_LOCK ran", "08003");
        }
        if (names.isClosed()) {
            releaseLocked(lock);
            throw new IllegalStateException("The lock manager is shut down");
        }
        if (!membership.grantable(System.nanoTime())) {
            // The membership lapsed during the wait: the fleet may have moved to leases, which this lock excludes not.
            releaseLocked(lock);
            throw new Membership.Unconfirmed();
        }
        return new HoldHandle<>(lock, engine, owner);
    }

    /**
     * A lock is valid while it is held and this instance's membership of its fleet is confirmed. A lock found unconfirmed
     * is lost the way a lapse loses it, which frees it on the server: the lapse is reported now (every session ended),
     * unless a renewal confirmed the membership meanwhile; a holder is never told of a loss of a lock still held for it.
     * <p>
     * The answer is final: false means lost, for good, and freed on the server. On an event loop, where no statement may
     * run, a lock found unconfirmed is marked lost at once (nothing blocks in that), and a worker frees it on the server
     * afterwards, even if a renewal confirms the membership meanwhile: whatever a holder is told it lost is freed.
     */
    boolean isValid(NamedLock lock) {
        if (lock.lost == null && !membership.confirmed(System.nanoTime())) {
            if (!BlockingOperationControl.isBlockingAllowed()) {
                notifier.lose(lock, LockLostException.Reason.MEMBERSHIP_LOST,
                        "Lock '" + lock.name + "' was lost: " + membership.lapseMessage(), null);
                if (lock.lost != null) {
                    freeLater(lock);
                }
                return lock.lost == null;
            }
            loseUnconfirmed(lock);
        }
        return lock.lost == null;
    }

    /** Frees on a worker thread a lock an event loop marked lost; at shutdown, closing the engine frees it. */
    private void freeLater(NamedLock lock) {
        try {
            connections.executor().execute(() -> freeLost(lock));
        } catch (RejectedExecutionException e) {
            // shut down: the engine's close ends every session
        }
    }

    /**
     * Frees on the server a lock an event loop marked lost for an unconfirmed membership, while its session may live on
     * (a renewal may have confirmed the membership since): a lapse due now is reported first, as on a worker thread
     * (every session ended); then the lock is released on its session if that still holds it, once the session's mutex
     * is free, as a lock ended at its cap is ({@link #endAtCap}). Its holds' later releases find it released.
     */
    private void freeLost(NamedLock lock) {
        membership.checkLapse();
        PinnedSession session = lock.session;
        try (PinnedSession.Guard locked = session.lock()) {
            if (lock.released || session.retired || session.held().get(lock.serverName) != lock) {
                return; // released, or ended with its session: freed already
            }
            session.lastUsed = System.nanoTime();
            releaseLocked(lock);
        }
    }

    private void loseUnconfirmed(NamedLock lock) {
        membership.checkLapse();
        if (lock.lost == null && !membership.confirmed(System.nanoTime())) {
            // the lapse was reported already, and its ending of the sessions has not reached this one yet
            lifecycle.abandon(lock.session, LockLostException.Reason.MEMBERSHIP_LOST, membership.lapseMessage());
        }
    }

    /** Ends one hold; the lock is released on the server when its last hold ends. */
    void release(NamedLock lock) {
        if (!BlockingOperationControl.isBlockingAllowed()) {
            // Never block an event loop: the handle is already invalid, the server statement follows on a worker.
            connections.executor().execute(() -> release(lock));
            return;
        }
        PinnedSession session = lock.session;
        try (PinnedSession.Guard locked = session.lock()) {
            if (--lock.holds > 0) {
                return;
            }
            lock.cancelCap();
            if (lock.released) {
                return;
            }
            // A lock lost while its session lives on (a lapsed membership) is still held on the server: release it too.
            if (lock.lost != null && (session.retired || session.held().get(lock.serverName) != lock)) {
                return;
            }
            if (lock.lost == null && membership.lapsed(System.nanoTime())) {
                // Its lapse is not reported yet: the fleet may have moved to leases while this lock was held.
                notifier.loseAtRelease(lock, LockLostException.Reason.MEMBERSHIP_LOST, "Lock '" + lock.name
                        + "' was lost before it was released: " + membership.lapseMessage(), null);
            }
            session.lastUsed = System.nanoTime();
            releaseLocked(lock);
        }
    }

    /**
     * The lock reached its {@code atMostFor} cap while held. Its holders are told first ({@code LEASE_EXPIRED}, as a
     * capped lease ends), without the session's mutex, which a {@code GET_LOCK} wait of the holder's thread may keep:
     * from then on the lock is invalid for them, before the server can grant it to anyone else. Then it is released on
     * the server, once the mutex is free; its holds' later releases find it released. Nothing happens to a lock
     * released or lost another way meanwhile: whatever ended it freed it on the server. A lock that an extension,
     * refused because this end had begun, already marked lost at its cap is freed here all the same.
     */
    void endAtCap(NamedLock lock) {
        loseAtCap(lock);
        LockLostException lost = lock.lost;
        if (lost == null || lost.reason() != LockLostException.Reason.LEASE_EXPIRED) {
            return; // released or lost another way meanwhile, and freed by it
        }
        PinnedSession session = lock.session;
        try (PinnedSession.Guard locked = session.lock()) {
            if (lock.released || session.retired || session.held().get(lock.serverName) != lock) {
                return;
            }
            session.lastUsed = System.nanoTime();
            releaseLocked(lock);
        }
    }

    /**
     * Tells the lock's holders that it reached its cap (once: by its end at the cap, or first by an extension that came
     * once that end had begun); nothing for a lock released or lost another way.
     */
    void loseAtCap(NamedLock lock) {
        notifier.lose(lock, LockLostException.Reason.LEASE_EXPIRED, HoldCaps.message(lock,
                "its holder's process releases it (a NAMED lock has no lease; the cap ends it here)"), null);
    }

    void abandon(NamedLock lock, String message) {
        notifier.lose(lock, LockLostException.Reason.CANCELLED, message, null);
        release(lock);
    }

    /** Releases the lock on the server; the session's mutex is held. */
    private void releaseLocked(NamedLock lock) {
        PinnedSession session = lock.session;
        lock.released = true;
        lock.cancelCap(); // again: an extend() may have capped it anew since its last hold's release cancelled it
        session.held().remove(lock.serverName);
        names.remove(lock.serverName, lock);
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
        boolean last = session.held().isEmpty() && !session.shared;
        boolean releaseAll = last && lifecycle.releaseAllSupported();
        SessionStatements.Released released;
        try {
            released = release(session, lock, releaseAll);
        } catch (SQLException e) {
            if (releaseAll && SqlErrors.isMissingFunction(e)) {
                lifecycle.releaseAllUnsupported();
                LOG.warn("The server has no RELEASE_ALL_LOCKS() (MariaDB before 10.5.2): lock connections will be"
                        + " closed instead of returned to the pool");
                // Closing the session releases the lock; nothing was lost.
                lifecycle.failSession(session, e);
                return;
            }
            lifecycle.failSession(session, e);
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
                lifecycle.retire(session);
            } else {
                lifecycle.discardLocked(session);
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
            if ((releaseAll && SqlErrors.isMissingFunction(e)) || SessionStatements.endedBy(session, e)) {
                throw e;
            }
            return statements.release(session, lock.serverName, releaseAll);
        }
    }
}
