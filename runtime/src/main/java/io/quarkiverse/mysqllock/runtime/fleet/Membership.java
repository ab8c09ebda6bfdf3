package io.quarkiverse.mysqllock.runtime.fleet;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.engine.Refusals;
import io.quarkiverse.mysqllock.runtime.fleet.EngineAgreement.Decision;
import io.quarkiverse.mysqllock.runtime.fleet.EngineAgreement.Outcome;
import io.quarkiverse.mysqllock.runtime.fleet.EngineAgreement.Proposal;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;
import io.quarkiverse.mysqllock.runtime.table.FleetRows;

/**
 * This instance's membership of its fleet ({@link EngineAgreement}): a lease on its membership row, renewed by its
 * engine's periodic work. Locks are granted only while the membership is confirmed, measured like a lease, with the
 * local monotonic clock from the moment the last confirming statement was sent: the fleet can change engine only once
 * every membership has expired on the server, and by then this instance grants nothing any more.
 * <p>
 * A lapse (the confirmation's deadline passed) is found by the clock alone ({@link #checkLapse()}, on every tick of the
 * engine), never only when a renewal returns, so a renewal stuck on a stalled connection cannot hide it; and by the
 * server, when a renewal finds the membership expired. A membership that expired is registered again if the fleet
 * still uses this instance's engine (or nothing of the fleet runs); if the fleet moved to the other engine meanwhile,
 * this instance is out of it for good.
 */
public final class Membership {

    private static final Logger LOG = Logger.getLogger(Membership.class);

    private final ConnectionSource connections;
    private final EngineAgreement agreement;
    private final LockMode mode;
    private final long ttlNanos;
    private final long marginNanos;
    /** One confirmation at a time; never held by the engine's periodic checks, which only read the clock. */
    private final ReentrantLock confirming = new ReentrantLock();
    /**
     * The confirmation ({@link #confirmedUntilNanos}) whose lapse was reported to the engine: each lapse is reported
     * once, and a confirmation that comes meanwhile never hides the next one.
     */
    private final AtomicLong lapseReportedFor = new AtomicLong();
    private volatile String memberName;
    private volatile String memberOwner;
    /** Local monotonic time until which the membership is known valid on the server. */
    private volatile long confirmedUntilNanos;
    /** Why this instance is out of the fleet, once it is; null while it is in. */
    private volatile String outBecause;
    /** The instance left its fleet (shutdown): a renewal still under way must not join it again. */
    private volatile boolean left;
    /**
     * How many times a connection found the server read-only, and how many of those times the membership was confirmed
     * after (a renewal that began after the last of them succeeded). Read-only means a failover may have moved the
     * datasource's address to another server, where this instance may not be a member: nothing is granted until a
     * renewal through the connections of now confirms it there.
     */
    private final AtomicLong readOnlySeen = new AtomicLong();
    private volatile long confirmedAfterReadOnly;
    /** The last confirmation failed because the server is read-only. */
    private volatile boolean readOnly;
    private volatile Listener listener = new Listener() {
    };

    /** What the engine does when its membership lapses, and when the instance is out of its fleet. */
    public interface Listener {
        /**
         * The membership lapsed before it was confirmed again: another engine may have taken over, so whatever was
         * granted under it is lost. Called once per lapse, before the membership is confirmed again.
         */
        default void lapsed() {
        }

        /** This instance is out of its fleet for good: nothing may be granted any more. */
        default void out(String why) {
        }
    }

    /**
     * @param sentAtNanos when the statement that registered the membership was sent
     * @param marginNanos how long before its confirmed end the membership counts as lapsed: at least twice the period
     *        of the engine's {@link #checkLapse()}, so that the lapse is found, and its locks ended, before the
     *        membership can expire on the server
     */
    public Membership(ConnectionSource connections, EngineAgreement agreement, Decision decision, long ttlNanos,
            long marginNanos, long sentAtNanos) {
        this.connections = connections;
        this.agreement = agreement;
        this.mode = decision.mode();
        this.ttlNanos = ttlNanos;
        this.marginNanos = marginNanos;
        this.memberName = decision.memberName();
        this.memberOwner = decision.memberOwner();
        // not a member yet on a read-only server: nothing is granted until it joins
        this.confirmedUntilNanos = decision.memberName() == null ? sentAtNanos - ttlNanos : sentAtNanos + ttlNanos;
        this.readOnly = decision.memberName() == null;
        if (decision.memberName() == null) {
            this.lapseReportedFor.set(confirmedUntilNanos); // nothing was granted before it
        }
        connections.whenReadOnly(readOnlySeen::incrementAndGet);
    }

    public void listen(Listener engine) {
        this.listener = engine;
    }

    /**
     * Before a grant: confirms the membership on the server if it may have lapsed, waiting at most {@code budgetNanos}
     * for a confirmation already under way.
     *
     * @throws IllegalStateException if this instance is out of its fleet
     * @throws LockNotAcquiredException if the membership cannot be confirmed now
     */
    public void confirmBeforeGrant(String lockName, long budgetNanos) {
        if (grantable(System.nanoTime())) {
            return;
        }
        boolean renewed;
        try {
            if (confirming.tryLock(budgetNanos, TimeUnit.NANOSECONDS)) {
                if (grantable(System.nanoTime())) {
                    confirming.unlock(); // confirmed by the renewal this thread waited for
                    renewed = true;
                } else {
                    renewed = renewHolding() && grantable(System.nanoTime());
                }
            } else {
                renewed = grantable(System.nanoTime()); // the renewal under way may have succeeded just now
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Refusals.callerInterrupted(lockName, Duration.ZERO, e);
        }
        if (!renewed) {
            throw notConfirmed(lockName);
        }
    }

    /**
     * Thrown by an engine whose grant found the membership not confirmed (it lapsed, or was found expired on the
     * server, during the acquisition): {@link #granting} confirms it, then tries once more.
     */
    public static final class Unconfirmed extends RuntimeException {
        public Unconfirmed() {
            super(null, null, false, false);
        }
    }

    /**
     * Runs an acquisition with the membership confirmed: confirms it first, and once more if the grant found it
     * unconfirmed (a re-registration under way, after a failover to a server where it is not known yet).
     *
     * @param grant the acquisition; it throws {@link Unconfirmed} when it refused a grant for want of a confirmation
     */
    public <T> T granting(String lockName, long waitNanos, Supplier<T> grant) {
        long deadline = System.nanoTime() + waitNanos;
        for (int attempt = 1;; attempt++) {
            confirmBeforeGrant(lockName, connections.budgetNanos(deadline - System.nanoTime()));
            try {
                return grant.get();
            } catch (Unconfirmed e) {
                if (attempt >= 2) {
                    throw notConfirmed(lockName);
                }
            }
        }
    }

    /** Why a grant was refused: out of the fleet, or the membership not confirmed. */
    public RuntimeException notConfirmed(String lockName) {
        String out = outBecause;
        if (out != null) {
            return new IllegalStateException("Lock '" + lockName + "' was not acquired: " + out);
        }
        if (readOnly) {
            return new LockNotAcquiredException(lockName, Duration.ZERO, LockNotAcquiredException.Reason.READ_ONLY, null,
                    "Lock '" + lockName + "' was not acquired: the lock database is read-only (a replica, or a primary"
                            + " demoted by a failover), so this instance cannot join its fleet in the lock table",
                    null);
        }
        return new LockNotAcquiredException(lockName, Duration.ZERO, LockNotAcquiredException.Reason.DATABASE_ERROR,
                null, "Lock '" + lockName + "' was not acquired: this instance could not confirm its membership of its"
                        + " fleet in the lock table in time (the database does not answer, or refuses the update)",
                null);
    }

    /**
     * Whether a lock may be granted now: the membership confirmed, and confirmed since the server was last found
     * read-only (after a failover, on the server new connections reach).
     */
    public boolean grantable(long nowNanos) {
        return confirmed(nowNanos) && confirmedAfterReadOnly == readOnlySeen.get();
    }

    /** Whether the membership is confirmed now, with the margin. */
    public boolean confirmed(long nowNanos) {
        return outBecause == null && nowNanos - (confirmedUntilNanos - marginNanos) < 0;
    }

    /**
     * Whether the membership may have expired on the server by now (no margin): whatever is still held was held when
     * the fleet may have changed engine.
     */
    public boolean lapsed(long nowNanos) {
        return outBecause != null || nowNanos - confirmedUntilNanos >= 0;
    }

    /** Why what was held across a lapse is lost. */
    public String lapseMessage() {
        return "this instance could not confirm in time that its fleet still uses the " + mode + " engine (it was"
                + " paused, or the database did not answer): the fleet may have moved to "
                + (mode == LockMode.NAMED ? "leases, which named locks do not exclude"
                        : "named locks, which leases do not exclude");
    }

    /** Why this instance is out of its fleet for good, or null. */
    public String outBecause() {
        return outBecause;
    }

    /**
     * Reports a lapse to the engine once, by the clock alone: never waits for a statement. The engine calls it more
     * often than the margin, so that the lapse is reported before the membership can expire on the server.
     */
    public void checkLapse() {
        long until = confirmedUntilNanos;
        if (outBecause == null && System.nanoTime() - (until - marginNanos) >= 0) {
            reportLapse(until, "lapsed");
        }
    }

    /** Tells the engine of the lapse of confirmation {@code until}, unless it was told already, or it was renewed. */
    private void reportLapse(long until, String how) {
        long reported = lapseReportedFor.get();
        if (reported == until || !lapseReportedFor.compareAndSet(reported, until)) {
            return;
        }
        if (confirmedUntilNanos != until) {
            return; // confirmed again meanwhile, by a renewal sent before it could expire: nothing lapsed
        }
        LOG.debugf("The membership %s %s: whatever was granted under it is lost", memberName, how);
        listener.lapsed();
    }

    /**
     * Confirms the membership on the server: renews it, or registers it again once it expired. Never throws; skipped
     * while another confirmation is under way.
     *
     * @return whether it is confirmed now
     */
    public boolean renew() {
        if (!confirming.tryLock()) {
            return confirmed(System.nanoTime());
        }
        return renewHolding();
    }

    /** Renews with {@link #confirming} held, and lets go of it. */
    private boolean renewHolding() {
        try {
            if (outBecause != null || left) {
                return false;
            }
            checkLapse();
            // A dead connection (the server restarted) is replaced once at once, not a period later; so is one that
            // reached a read-only server: the pool's new connections may reach the writable one (a failover).
            for (int attempt = 1; attempt <= 2; attempt++) {
                long readOnlyBefore = readOnlySeen.get();
                Optional<SQLException> failure;
                try {
                    failure = renewOnce();
                } catch (RuntimeException e) {
                    LOG.debugf("Confirming this instance's membership of its fleet failed: %s", e.getMessage());
                    break;
                }
                if (failure.isEmpty()) {
                    if (confirmed(System.nanoTime())) {
                        confirmedAfterReadOnly = Math.max(confirmedAfterReadOnly, readOnlyBefore);
                    }
                    break;
                }
                if (!SqlErrors.isConnectionFailure(failure.get()) && !SqlErrors.isReadOnly(failure.get())) {
                    break;
                }
            }
            return confirmed(System.nanoTime());
        } finally {
            confirming.unlock();
        }
    }

    /**
     * One renewal, on the connection kept for the engines' housekeeping: an application holding every other connection
     * of the pool must not cost this instance its membership, and with it every lock it holds. Empty if its statements
     * ran (the membership may still be unconfirmed: registered again on a read-only server, or out of the fleet), else
     * the SQL failure; any other failure (no connection to be had) is thrown.
     */
    private Optional<SQLException> renewOnce() {
        // Waiting longer than the membership lasts is useless.
        long bound = Math.min(TimeUnit.NANOSECONDS.toMillis(ttlNanos), connections.statementTimeoutMillis());
        try {
            connections.housekeeping(bound, raw -> {
                renewOn(raw);
                return null;
            });
            return Optional.empty();
        } catch (SQLException e) {
            readOnly = SqlErrors.isReadOnly(e);
            if (readOnly) {
                connections.readOnlyFound("membership of the fleet");
            }
            LOG.debugf("Confirming this instance's membership of its fleet failed: %s", SqlErrors.describe(e));
            return Optional.of(e);
        }
    }

    private void renewOn(Connection raw) throws SQLException {
        long sentAt = System.nanoTime();
        // Waits for no row lock: an update the server ran only once the row was free, after this instance gave up on
        // it, would make a lapsed membership live again.
        if (memberName != null && Statements.withoutRowWaits(raw, connections.server(raw),
                prefix -> agreement.renew(raw, prefix, memberName, memberOwner, ttlNanos))) {
            // It had not expired on the server: no other engine can have taken over meanwhile.
            confirmedUntilNanos = sentAt + ttlNanos;
            readOnly = false;
            return;
        }
        // Expired on the server (or never joined): a lapse, whatever the local clock says. Nothing is granted from now
        // on, until the membership is registered again.
        if (memberName != null) {
            long lapsed = Math.min(confirmedUntilNanos, sentAt - ttlNanos);
            confirmedUntilNanos = lapsed;
            reportLapse(lapsed, "had expired on the server");
        }
        registerAgain(raw, sentAt);
    }

    private void registerAgain(Connection raw, long sentAt) throws SQLException {
        if (left) {
            return;
        }
        // One attempt: a caller may be waiting for it, and the periodic renewal tries again.
        Outcome outcome = agreement.agreeOnce(raw,
                new Proposal(mode, "it ran the " + mode + " engine before its membership expired", true,
                        Optional.empty()),
                ttlNanos);
        if (outcome.refusal() != null) {
            outBecause = "this instance's membership of its fleet expired (it was paused, or could not reach the"
                    + " database for as long as a membership lasts), and the fleet has moved to the other engine meanwhile. Restart it. "
                    + outcome.refusal().message();
            LOG.error(outBecause);
            listener.out(outBecause);
            return;
        }
        if (outcome.decision().memberName() == null) {
            readOnly = true; // still read-only: not a member yet
            return;
        }
        boolean first = memberName == null;
        memberName = outcome.decision().memberName();
        memberOwner = outcome.decision().memberOwner();
        confirmedUntilNanos = sentAt + ttlNanos;
        readOnly = false;
        if (left) {
            // shutdown came during the registration: end the membership it made
            agreement.leave(raw, memberName, memberOwner);
            return;
        }
        LOG.infof(first ? "This instance joined its fleet (%s engine) now that the lock database is writable"
                : "This instance's membership of its fleet had expired; it joined again (%s engine)", mode);
    }

    /**
     * The leader windows of the fleet's live NAMED members, read now.
     *
     * @throws IllegalStateException if the database does not answer: a term must not begin on a guess, which could be
     *         shorter than a former leader's window
     */
    public FleetRows.LeaderWindows leaderWindows() {
        try {
            return connections.housekeeping(connections.statementTimeoutMillis(), agreement::leaderWindows);
        } catch (SQLException e) {
            throw new IllegalStateException("the fleet's leader windows could not be read: " + SqlErrors.describe(e), e);
        }
    }

    /** Ends the membership at shutdown, so that the fleet may change engine once every member left. Never throws. */
    public void leave() {
        left = true;
        boolean locked = false;
        try {
            // after a renewal under way, which could otherwise register the membership again once it is gone
            locked = confirming.tryLock(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            leaveNow();
        } finally {
            if (locked) {
                confirming.unlock();
            }
        }
    }

    private void leaveNow() {
        if (memberName == null) {
            return;
        }
        // once more on another connection if the kept one was dead (the pool may close its connections at shutdown
        // first): leaving twice is leaving
        for (int attempt = 1; attempt <= 2; attempt++) {
            try {
                connections.housekeeping(connections.statementTimeoutMillis(), raw -> {
                    agreement.leave(raw, memberName, memberOwner);
                    return null;
                });
                return;
            } catch (SQLException e) {
                if (attempt == 2 || !SqlErrors.isConnectionFailure(e)) {
                    LOG.debugf("Leaving the fleet failed (the membership ends with its ttl): %s", e.getMessage());
                    return;
                }
            } catch (RuntimeException e) {
                LOG.debugf("Leaving the fleet failed (the membership ends with its ttl): %s", e.getMessage());
                return;
            }
        }
    }
}
