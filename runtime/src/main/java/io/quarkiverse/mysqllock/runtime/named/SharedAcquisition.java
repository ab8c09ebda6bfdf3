package io.quarkiverse.mysqllock.runtime.named;

import java.math.BigDecimal;
import java.sql.SQLException;
import java.time.Duration;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.Refusals;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.named.SessionStatements.Grant;

/**
 * Asks for a lock without waiting, on a shared session. In-JVM exclusion comes first: a name this instance holds never
 * reaches a shared session, where the server would grant it again. Only an error that ended the session fails its
 * co-tenants' locks; any other fails this call alone.
 */
final class SharedAcquisition {

    private static final Logger LOG = Logger.getLogger(NamedLockEngine.class);
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;

    /** The handle if granted; else who holds the name, when asked to describe it. */
    record Attempt(ControlledHandle handle, String holder) {
    }

    private final SessionStatements statements;
    private final NameRegistry names;
    private final SharedSessions shared;
    private final SessionLifecycle lifecycle;
    private final SessionGrants holds;

    SharedAcquisition(SessionStatements statements, NameRegistry names, SharedSessions shared, SessionLifecycle lifecycle,
            SessionGrants holds) {
        this.statements = statements;
        this.names = names;
        this.shared = shared;
        this.lifecycle = lifecycle;
        this.holds = holds;
    }

    /**
     * Asks for the lock without waiting on a shared session. In-JVM exclusion comes first: a name this instance holds
     * never reaches a shared session, where the server would grant it again (named locks are re-entrant per session).
     * Two threads asking at once on one session meet under its mutex; on two sessions the server decides.
     */
    Attempt tryShared(String name, String serverName, Thread me, long deadline, boolean describe) {
        for (int attempt = 1;; attempt++) {
            NamedLock here = names.get(serverName);
            if (here != null && here.isHeld()) {
                return new Attempt(null, describe ? names.describeLocal(here) : null);
            }
            PinnedSession.Guard locked = null;
            PinnedSession session = null;
            try {
                locked = shared.lockShared(name, deadline - System.nanoTime());
                session = locked.session();
                // Again under the session's mutex: a grant on this session is registered under it, so none is missed.
                here = names.get(serverName);
                if (here != null && here.isHeld()) {
                    return new Attempt(null, describe ? names.describeLocal(here) : null);
                }
                NamedLock stale = session.held().get(serverName);
                if (stale != null) {
                    // Told lost but not released yet, still held by this session: GET_LOCK would grant it again.
                    return new Attempt(null, describe ? names.describeLocal(stale) : null);
                }
                session.lastUsed = System.nanoTime();
                Grant grant = statements.getLock(session, serverName, BigDecimal.ZERO, 0);
                if (grant == Grant.GRANTED) {
                    return new Attempt(holds.register(session, name, serverName, me), null);
                }
                if (grant == Grant.INTERRUPTED) {
                    throw Refusals.interrupted(name, Duration.ZERO);
                }
                if (grant == Grant.READ_ONLY) {
                    // Locks on this session live on a server that is no longer the writer; a new one may reach it.
                    lifecycle.failSessionReadOnly(session);
                    if (attempt >= MAX_STALE_CONNECTIONS) {
                        throw Refusals.readOnly(name, Duration.ZERO);
                    }
                    continue;
                }
                shared.markContended(serverName);
                return new Attempt(null, describe ? names.describeHolder(session, serverName) : null);
            } catch (SQLException e) {
                // Only an error that ended the session fails its co-tenants' locks; any other fails this call alone.
                boolean ended = session == null || SessionStatements.endedBy(session, e);
                if (session != null && ended) {
                    lifecycle.failSession(session, e);
                }
                // A shared connection that died (server restart, KILL) is replaced; its locks were reported lost.
                if (!ended || !SqlErrors.isConnectionFailure(e) || attempt >= MAX_STALE_CONNECTIONS) {
                    throw new LockNotAcquiredException(name, Duration.ZERO, Reason.DATABASE_ERROR, null,
                            "Lock '" + name + "' was not acquired: " + SqlErrors.describe(e), e);
                }
                LOG.debugf(e, "Replacing a failed shared lock connection for lock '%s'", name);
            } finally {
                if (locked != null) {
                    boolean live = !session.retired;
                    locked.close();
                    if (live) {
                        shared.offerIdleShared(session);
                    }
                }
            }
        }
    }
}
