package io.quarkiverse.mysqllock.runtime.named;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.runtime.engine.GrantingEngine;
import io.quarkiverse.mysqllock.runtime.engine.HoldCaps;
import io.quarkiverse.mysqllock.runtime.engine.HoldHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockName;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkiverse.mysqllock.runtime.engine.LockTimings;
import io.quarkiverse.mysqllock.runtime.engine.LossNotifier;
import io.quarkiverse.mysqllock.runtime.engine.PeriodicWork;
import io.quarkiverse.mysqllock.runtime.engine.Refusals;
import io.quarkiverse.mysqllock.runtime.fleet.Membership;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.table.FleetRows;
import io.quarkiverse.mysqllock.runtime.table.LockTable;

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
 * <p>
 * This class only routes; the path of a name, top-down: {@code NameRegistry} (nesting, in-JVM exclusion), then
 * {@code SharedAcquisition} on a {@code SharedSessions} session, else {@code OwnSessionAcquisition} on the thread's
 * own session ({@code PinnedSessions}) after the {@code WaitForGraph} let it wait; a grant is registered and released by
 * {@code SessionGrants}, with {@code SessionStatements}, on a session {@code PinnedSessions} pinned and
 * {@code SessionLifecycle}
 * ends. {@code Keepalive} checks the sessions and the membership, {@code FenceIssuer} issues fencing tokens, and
 * {@code HolderCensus} answers who holds what. Each session's state is guarded by its lock, which the part that takes
 * it ({@code PinnedSession.lock}, {@code tryLock}) hands on as a {@code PinnedSession.Guard} to the part that closes it.
 */
public final class NamedLockEngine implements LockEngine, GrantingEngine<NamedLock> {

    private final ConnectionSource connections;
    /** This instance's membership of its fleet: locks are granted, and valid, only while it is confirmed. */
    private final Membership membership;
    private final LossNotifier notifier;
    private final NameRegistry names;
    private final PinnedSessions pinned;
    private final SharedSessions shared;
    private final SharedAcquisition onShared;
    private final OwnSessionAcquisition onOwn;
    private final SessionGrants holds;
    private final FenceIssuer fences;
    private final SessionLifecycle lifecycle;
    private final HolderCensus census;
    private final Keepalive keepalive;
    private final HoldCaps<NamedLock> caps;
    /** The lock table (fencing tokens), as statements name it. */
    private final String tableName;
    /** Fenced commits: every grant issues its token before its holder begins ({@link FenceIssuer#issueAtGrant}). */
    private final boolean tokensAtGrant;

    public NamedLockEngine(ConnectionSource connections, LockTable table, String identity, LockTimings timings,
            int sharedConnections, LockMetrics metrics, Membership membership) {
        this(connections, table, identity, timings, sharedConnections, metrics, membership, false);
    }

    /** @param tokensAtGrant fenced commits: every grant issues its fencing token before its holder begins */
    public NamedLockEngine(ConnectionSource connections, LockTable table, String identity, LockTimings timings,
            int sharedConnections, LockMetrics metrics, Membership membership, boolean tokensAtGrant) {
        this.tokensAtGrant = tokensAtGrant;
        this.notifier = new LossNotifier(metrics, LockMode.NAMED);
        this.membership = membership;
        this.connections = connections;
        SessionStatements statements = new SessionStatements(connections);
        // The handles made by the registry and by SessionGrants call back into this engine (GrantingEngine) to release their holds.
        this.names = new NameRegistry(identity, this);
        this.pinned = new PinnedSessions(connections, statements);
        this.shared = new SharedSessions(sharedConnections, connections, pinned);
        this.lifecycle = new SessionLifecycle(connections, statements, notifier, names, pinned, shared);
        this.holds = new SessionGrants(connections, statements, notifier, membership, names, lifecycle, this);
        this.onShared = new SharedAcquisition(statements, names, shared, lifecycle, holds);
        this.onOwn = new OwnSessionAcquisition(connections, statements, membership, names, new WaitForGraph(names),
                pinned, lifecycle, holds);
        this.fences = new FenceIssuer(connections, table, notifier, holds::isValid);
        this.tableName = table.name();
        this.caps = new HoldCaps<>("mysql-lock-cap-", connections.executor(), holds::endAtCap);
        this.census = new HolderCensus(connections, table, names, pinned, shared);
        // Last: it starts the periodic work on the parts above.
        this.keepalive = new Keepalive(timings, connections, membership, notifier, names, pinned, shared,
                lifecycle);
    }

    @Override
    public LockMode mode() {
        return LockMode.NAMED;
    }

    // --- acquire ---

    @Override
    public ControlledHandle acquire(LockRequest request) {
        names.ensureOpen();
        long start = System.nanoTime();
        long deadline = start + request.waitNanos();
        return membership.granting(request.name(), request.waitNanos(),
                () -> acquireConfirmed(request.name(), request.serverName(), start, deadline, request.throwIfBusy(),
                        request.ownerThread(), request.atMostForNanos()));
    }

    /** {@code capNanos}: how long a lock taken now may be held at most ({@code atMostFor}), 0 for no cap. */
    private ControlledHandle acquireConfirmed(String name, String serverName, long start, long deadline,
            boolean throwIfBusy, Thread me, long capNanos) {
        // A hold without an owner thread: nothing nests onto it, and it never uses a thread's own session.
        if (me != null) {
            ControlledHandle nested = names.nest(me, serverName);
            if (nested != null) {
                return nested; // as on LEASE, a nested hold keeps the lock's cap, or its lack of one
            }
        }
        ControlledHandle taken = take(name, serverName, start, deadline, throwIfBusy, me);
        if (taken != null && tokensAtGrant) {
            try {
                fences.issueAtGrant(HoldHandle.lockOf(taken, NamedLock.class), deadline);
            } catch (FenceIssuer.RowHeld e) {
                taken.release();
                return Refusals.busy(name, start, throwIfBusy, null,
                        "a transaction of its previous holder, which has not committed yet (fenced commit)");
            } catch (LockLostException e) {
                // lost already: its holder is told (isValid, onLost), and a @Locked body does not run
            } catch (RuntimeException e) {
                taken.release();
                throw new LockNotAcquiredException(name, Duration.ofNanos(System.nanoTime() - start),
                        LockNotAcquiredException.Reason.DATABASE_ERROR, null, "Lock '" + name + "' was granted, but"
                                + " its fencing token, which fenced commits need before its holder begins, could not"
                                + " be issued (it was released): " + e.getMessage(),
                        e);
            }
        }
        if (taken != null && capNanos > 0) {
            // No lease here: the lock ends with its session, or when this process ends it at the cap.
            caps.capAt(HoldHandle.lockOf(taken, NamedLock.class), capNanos);
        }
        return taken;
    }

    private ControlledHandle take(String name, String serverName, long start, long deadline, boolean throwIfBusy,
            Thread me) {
        boolean noWait = deadline == start;
        if (shared.enabled() && (me == null || !pinned.hasOwn(me))
                && (noWait || !shared.recentlyContended(serverName, start))) {
            SharedAcquisition.Attempt attempt = onShared.tryShared(name, serverName, me, deadline, noWait && throwIfBusy);
            if (attempt.handle() != null) {
                return attempt.handle();
            }
            if (noWait) {
                return Refusals.busy(name, start, throwIfBusy, attempt.holder(), "another session");
            }
        }
        return onOwn.acquireOnOwnSession(name, serverName, me, start, deadline, throwIfBusy);
    }

    // --- a hold (GrantingEngine) ---

    @Override
    public void release(NamedLock lock) {
        holds.release(lock);
    }

    @Override
    public void abandon(NamedLock lock, String message) {
        holds.abandon(lock, message);
    }

    /**
     * Moves the lock's cap, if it has one, in one step with the end at that cap ({@link HoldCaps#extend}): a lock without
     * one lasts until it is released and needs nothing. A lock whose end at its cap has begun is not extended: its holder
     * is told now (if the end has not told it yet), and the end frees it.
     */
    @Override
    public boolean extend(NamedLock lock, long atMostForNanos) {
        if (caps.extend(lock, atMostForNanos)) {
            return true;
        }
        if (lock.lost == null && !lock.released) {
            holds.loseAtCap(lock);
        }
        throw HoldCaps.notExtended(lock);
    }

    /** The lock table, which keeps the fencing tokens, as statements name it. */
    public String tableName() {
        return tableName;
    }

    @Override
    public long fencingToken(NamedLock lock) {
        return fences.fencingToken(lock);
    }

    /** A lock is valid while it is held and this instance's membership of its fleet is confirmed. */
    @Override
    public boolean confirmedWithin(NamedLock lock, long nanos) {
        PinnedSession session = lock.session;
        return holds.isValid(lock) && session.confirmed && System.nanoTime() - session.confirmedAt < nanos;
    }

    @Override
    public boolean isValid(NamedLock lock) {
        return holds.isValid(lock);
    }

    @Override
    public boolean confirm(NamedLock lock, long sinceNanos) {
        if (!holds.isValid(lock)) {
            return false;
        }
        keepalive.confirm(lock, sinceNanos);
        return holds.isValid(lock);
    }

    // --- queries ---

    @Override
    public boolean isLocked(LockName lock) {
        return census.isLocked(lock.name(), lock.serverName());
    }

    @Override
    public Optional<LockInfo> inspect(LockName lock) {
        return census.inspect(lock.name(), lock.serverName());
    }

    @Override
    public List<LockInfo> held() {
        return census.held();
    }

    @Override
    public List<LockInfo> holders() {
        return census.holders();
    }

    @Override
    public boolean forceRelease(LockName lock) {
        throw new UnsupportedOperationException("forceRelease is for the LEASE engine. Named lock '" + lock.name()
                + "' belongs to a server session, which the server alone can end: KILL <connection id> ends it (inspect()"
                + " names the holder's connection), and its holder is told through onLost");
    }

    @Override
    public PeriodicWork periodicWork() {
        return keepalive.work();
    }

    @Override
    public EngineHealth health() {
        return keepalive.health();
    }

    /**
     * The leader windows of the fleet's live members, read now: how long a new strict term waits after its grant (they
     * may run with other keepalive intervals, during a rolling change), and whether every one hands over instantly.
     */
    public FleetRows.LeaderWindows leaderWindows() {
        return membership.leaderWindows();
    }

    /** The number of connections this engine keeps out of the pool now. */
    public int pinnedConnections() {
        return census.pinnedConnections();
    }

    /** What each connection kept out of the pool holds and why it is kept, for diagnostics. */
    public List<String> describePinned() {
        return census.describePinned();
    }

    // --- shutdown ---

    @Override
    public void close() {
        if (names.isClosed()) {
            return;
        }
        names.markClosed();
        keepalive.shutdownNow();
        caps.close();
        lifecycle.closeAll();
        membership.leave();
        notifier.close();
        connections.close();
    }
}
