package io.quarkiverse.mysqllock.runtime.named;

import java.sql.SQLException;
import java.time.Duration;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LocalGate;
import io.quarkiverse.mysqllock.runtime.engine.Refusals;
import io.quarkiverse.mysqllock.runtime.fleet.Membership;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.named.SessionStatements.Grant;

/**
 * An acquisition on the thread's own session: a thread waits on a session of its own, and keeps using it while it
 * holds locks there, so that the server sees (and breaks) deadlocks between the locks on it; a wait that would close a
 * cycle among this instance's threads is refused before it starts. Also takes the locks of a thread that has such a
 * session, and those no shared session could grant.
 */
final class OwnSessionAcquisition {

    private static final Logger LOG = Logger.getLogger(NamedLockEngine.class);
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;

    /** A session found its server read-only: it was failed, and the acquisition may try a new connection. */
    private static final class ServerReadOnly extends Exception {
        ServerReadOnly() {
            super(null, null, false, false);
        }
    }

    private final ConnectionSource connections;
    private final SessionStatements statements;
    /** This instance's membership of its fleet: confirmed again before each further attempt. */
    private final Membership membership;
    private final NameRegistry names;
    private final WaitForGraph waits;
    private final PinnedSessions pinned;
    private final SessionLifecycle lifecycle;
    private final SessionGrants holds;
    /** The right to wait on the server for a name, one thread at a time per name. */
    private final LocalGate.Gates gates = new LocalGate.Gates();

    OwnSessionAcquisition(ConnectionSource connections, SessionStatements statements, Membership membership,
            NameRegistry names, WaitForGraph waits, PinnedSessions pinned,
            SessionLifecycle lifecycle, SessionGrants holds) {
        this.connections = connections;
        this.statements = statements;
        this.membership = membership;
        this.names = names;
        this.waits = waits;
        this.pinned = pinned;
        this.lifecycle = lifecycle;
        this.holds = holds;
    }

    /**
     * Takes the lock on the thread's own session. A thread with time to wait is recorded in the {@link WaitForGraph}
     * first (refused at once, {@code DEADLOCK}, if its wait would close a cycle among this instance's threads), and
     * taken out when the call ends. Unless it has a session of its own already, or no time left, it then passes the
     * name's {@link LocalGate}: one waiter per name goes to the server, the others wait in the JVM. Then it waits in
     * {@code GET_LOCK} on its own session ({@link PinnedSessions#lockOwn}), or on a newly pinned one that becomes its own once
     * granted (an ownerless hold's is nobody's), and keeps using it while it holds locks there, so that the server sees
     * (and breaks) deadlocks between them.
     */
    ControlledHandle acquireOnOwnSession(String name, String serverName, Thread me, long start, long deadline,
            boolean throwIfBusy) {
        boolean waiting = me != null && deadline - System.nanoTime() > 0;
        if (waiting) {
            waits.startWaiting(me, name, serverName);
        }
        try {
            return gatedWait(name, serverName, me, start, deadline, throwIfBusy);
        } finally {
            if (waiting) {
                waits.stopWaiting(me);
            }
        }
    }

    /**
     * Of the threads of this instance that wait for one name and have no session of their own, one waits on the server
     * (in {@code GET_LOCK}), the others in the JVM, in the order they came, for the right to: 1,000 waiters cost one
     * session and one place in the server's queue per instance, not 1,000. The right passes on when the waiting one's
     * {@code GET_LOCK} answers, so the next is queued on the server while the lock is held. A thread that has a session
     * of its own (it holds locks it waited for) waits there, where the server sees the deadlocks among its locks; a
     * thread without one holds no lock the server could see in a cycle.
     */
    private ControlledHandle gatedWait(String name, String serverName, Thread me, long start, long deadline,
            boolean throwIfBusy) {
        if (deadline - System.nanoTime() <= 0 || (me != null && pinned.hasOwn(me))) {
            return ownSession(name, serverName, me, start, deadline, throwIfBusy);
        }
        LocalGate gate = gates.enter(serverName);
        try {
            boolean passed;
            try {
                passed = gate.pass(deadline - System.nanoTime());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Refusals.interrupted(name, Duration.ofNanos(System.nanoTime() - start));
            }
            if (!passed) {
                NamedLock here = names.get(serverName);
                String holder = throwIfBusy && here != null && here.isHeld() ? names.describeLocal(here) : null;
                return Refusals.busy(name, start, throwIfBusy, holder, "another session");
            }
            try {
                return ownSession(name, serverName, me, start, deadline, throwIfBusy);
            } finally {
                gate.open();
            }
        } finally {
            gates.leave(serverName, gate);
        }
    }

    private ControlledHandle ownSession(String name, String serverName, Thread me, long start, long deadline,
            boolean throwIfBusy) {
        for (int attempt = 1;; attempt++) {
            if (attempt > 1) {
                membership.confirmBeforeGrant(name, connections.budgetNanos(deadline - System.nanoTime()));
            }
            PinnedSession.Guard locked = me == null ? null : pinned.lockOwn(me, serverName);
            boolean fresh = false;
            if (locked == null) {
                locked = pinned.pin(name, me, false, connections.budgetNanos(deadline - System.nanoTime()));
                fresh = true;
                // Known before it waits, so that a lapse during the wait ends it (and voids its grant).
                pinned.add(locked.session());
            }
            PinnedSession session = locked.session();
            try {
                return acquireOn(session, fresh, name, serverName, start, deadline, throwIfBusy);
            } catch (ServerReadOnly e) {
                // The session reached a read-only server; a new connection may reach the writer.
                if (attempt >= MAX_STALE_CONNECTIONS) {
                    throw Refusals.readOnly(name, Duration.ofNanos(System.nanoTime() - start));
                }
            } catch (SQLException e) {
                Duration waited = Duration.ofNanos(System.nanoTime() - start);
                if (SqlErrors.isDeadlock(e)) {
                    // The server refused this wait only; the session keeps every lock it held.
                    lifecycle.retireIfEmpty(session);
                    throw Refusals.deadlock(name, waited, "the server detected a deadlock", e);
                }
                if (!SessionStatements.endedBy(session, e)) {
                    // An error of this statement alone (a privilege, a time limit): the session keeps its locks.
                    lifecycle.retireIfEmpty(session);
                    throw new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null,
                            "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
                }
                lifecycle.failSession(session, e);
                if (!membership.confirmed(System.nanoTime())) {
                    throw new Membership.Unconfirmed(); // a lapse ended the session under its wait
                }
                if (Thread.currentThread().isInterrupted()) {
                    // An interrupt came with the failure (on a virtual thread, it closes the socket under the wait):
                    // the caller asked to stop, so no other connection is tried.
                    throw Refusals.callerInterrupted(name, waited, e);
                }
                // A pooled connection that died idle (server restart, wait_timeout) is replaced, not reported.
                if (!fresh || !SqlErrors.isConnectionFailure(e) || attempt >= MAX_STALE_CONNECTIONS) {
                    throw new LockNotAcquiredException(name, waited, Reason.DATABASE_ERROR, null,
                            "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
                }
                LOG.debugf(e, "Replacing a dead pooled connection for lock '%s'", name);
            } finally {
                locked.close();
            }
        }
    }

    private ControlledHandle acquireOn(PinnedSession session, boolean fresh, String name, String serverName, long start,
            long deadline, boolean throwIfBusy) throws SQLException, ServerReadOnly {
        Grant grant = statements.getLock(session, serverName, deadline);
        if (grant == Grant.READ_ONLY) {
            lifecycle.failSessionReadOnly(session);
            throw new ServerReadOnly();
        }
        if (grant == Grant.GRANTED) {
            ControlledHandle handle = holds.register(session, name, serverName, session.affinity);
            if (fresh && session.affinity != null) {
                pinned.makeOwn(session.affinity, session);
                if (session.retired) {
                    // ended under its statement after the grant (SessionLifecycle.abandonBusy): not the thread's any more
                    pinned.forgetOwner(session);
                }
            }
            return handle;
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        if (grant == Grant.INTERRUPTED) {
            lifecycle.retireIfEmpty(session);
            throw Refusals.interrupted(name, waited);
        }
        String holder = throwIfBusy ? names.describeHolder(session, serverName) : null;
        lifecycle.retireIfEmpty(session);
        return Refusals.busy(name, start, throwIfBusy, holder, "another session");
    }
}
