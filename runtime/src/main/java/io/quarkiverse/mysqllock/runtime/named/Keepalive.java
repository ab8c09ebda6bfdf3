package io.quarkiverse.mysqllock.runtime.named;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.runtime.engine.LockTimings;
import io.quarkiverse.mysqllock.runtime.engine.LossNotifier;
import io.quarkiverse.mysqllock.runtime.engine.PeriodicWork;
import io.quarkiverse.mysqllock.runtime.fleet.Membership;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;

/**
 * The engine's periodic work, each piece on a thread of its own so that a stalled session delays no other: checks that
 * every session holding locks is still the server session that was granted them, renews this instance's membership of
 * its fleet and ends every session when it lapses, and gives back shared sessions that held nothing for a moment. The
 * health check runs the same session check on demand.
 */
final class Keepalive {

    private static final Logger LOG = Logger.getLogger(NamedLockEngine.class);
    private static final int NAMES_PER_CHECK = SessionStatements.NAMES_PER_CHECK;

    private final ConnectionSource connections;
    /** This instance's membership of its fleet: locks are granted, and valid, only while it is confirmed. */
    private final Membership membership;
    private final LossNotifier notifier;
    private final NameRegistry names;
    private final PinnedSessions pinned;
    private final SharedSessions shared;
    private final SessionLifecycle lifecycle;
    /** Schedules the periodic work; the statements it causes run on {@link #checks}. */
    private final PeriodicWork keepalive;
    /** Runs each session's check and give-back on a thread of its own: a stalled session delays no other. */
    private final ExecutorService checks;
    /** How often each session holding locks is checked: {@code keepalive-interval}. */
    private final long checkPeriodNanos;
    /** Set while a renewal of the membership runs: never two at once. */
    private final AtomicBoolean confirming = new AtomicBoolean();

    /** Starts the periodic work, and ends every session when the membership lapses or the instance is out of its fleet. */
    Keepalive(LockTimings timings, ConnectionSource connections, Membership membership, LossNotifier notifier,
            NameRegistry names, PinnedSessions pinned, SharedSessions shared, SessionLifecycle lifecycle) {
        this.connections = connections;
        this.membership = membership;
        this.notifier = notifier;
        this.names = names;
        this.pinned = pinned;
        this.shared = shared;
        this.lifecycle = lifecycle;
        this.keepalive = new PeriodicWork("mysql-lock-keepalive-", 1);
        this.checks = Executors.newCachedThreadPool(ConnectionSource.daemonThreads("mysql-lock-check-"));
        long period = timings.keepaliveNanos();
        this.checkPeriodNanos = period;
        keepalive.every(period, period, "check of its sessions", this::checkSessions);
        keepalive.every(period, period, "renewal of its membership", this::confirmMembership);
        // Twice per period, the margin of the membership: its lapse is reported at least half a period before it can
        // expire on the server.
        // by this process's clock: a pause of the renewals (the test kit) does not stop it
        keepalive.everyUnpaused(period / 2, period / 2, "check of its membership", this::watchMembership);
        membership.listen(new Membership.Listener() {
            @Override
            public void lapsed() {
                lifecycle.abandonAll(LockLostException.Reason.MEMBERSHIP_LOST, membership.lapseMessage());
            }

            @Override
            public void out(String why) {
                lifecycle.abandonAll(LockLostException.Reason.MEMBERSHIP_LOST, why);
            }
        });
        keepalive.every(SharedSessions.LINGER_NANOS, SharedSessions.LINGER_NANOS / 2, "give-back of idle sessions",
                this::tendIdleSessions);
    }

    /** Stops the periodic work and interrupts the checks under way (shutdown). */
    PeriodicWork work() {
        return keepalive;
    }

    void shutdownNow() {
        keepalive.shutdownNow();
        checks.shutdownNow();
    }

    // --- the membership ---

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

    // --- the sessions ---

    /**
     * Runs work on a thread of the check pool; false if it could not be started (the engine is shutting down, or no
     * thread could be made): the caller then lets go of whatever it claimed for the work, so that the next period
     * tries again.
     */
    private boolean runOnChecks(Runnable work) {
        try {
            checks.execute(work);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        } catch (RuntimeException | Error e) {
            LOG.error("The lock engine's keepalive could not start a check; it tries again next period", e);
            return false;
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
                LOG.error("Tending a lock connection (its check or give-back) failed", e);
            } finally {
                session.checking.set(false);
            }
        })) {
            session.checking.set(false); // not started: the next period claims it again
        }
    }

    /**
     * Tends the sessions that may have something due now: the shared ones that have held nothing for a moment (to give
     * them back), and any other that seems to hold nothing while still pinned (never expected: given back, and logged).
     */
    private void tendIdleSessions() {
        long now = System.nanoTime();
        for (PinnedSession session : pinned.all()) {
            // seemsEmpty() is a hint only: tend() decides under the session's lock
            if (now - session.lastUsed >= SharedSessions.LINGER_NANOS && (session.shared || session.seemsEmpty())) {
                onCheckThread(session, () -> tend(session, false));
            }
        }
    }

    /** Tends every session, each on a thread of its own: every session that holds locks is checked. */
    private void checkSessions() {
        for (PinnedSession session : pinned.all()) {
            onCheckThread(session, () -> tend(session, true));
        }
    }

    /**
     * Whatever is due on a session, under its mutex: a check of its locks, or its give-back once it has held nothing
     * for a moment. Whichever periodic task claimed the session does all of it: a claim by one task makes the other
     * skip the session, and with the two tasks run back to back (as after a pause of the JVM), a task that did only its
     * own part would starve the other's for good.
     *
     * @param checkTick the session check's own period called: a session holding locks is checked now; otherwise only
     *        if its last check is a whole period ago
     */
    private void tend(PinnedSession session, boolean checkTick) {
        PinnedSession.Guard locked = session.tryLock();
        if (locked == null) {
            return; // busy in a statement, which itself would fail if the session were gone
        }
        try (locked) {
            if (session.retired) {
                return;
            }
            long now = System.nanoTime();
            if (!session.held().isEmpty()) {
                if (checkTick || now - session.lastChecked() >= checkPeriodNanos) {
                    check(session);
                }
            } else if (now - session.lastUsed >= SharedSessions.LINGER_NANOS) {
                if (!session.shared) {
                    LOG.warnf("A lock connection of thread '%s' (server session %d) held nothing and was still kept"
                            + " out of the pool; it goes back now",
                            session.affinity == null ? "(none)"
                                    : session.affinity.getName(),
                            session.connectionId);
                }
                lifecycle.giveBackEmpty(session, true);
            }
        }
    }

    /** Checks a session's locks on the server; false if the session failed (its locks are then reported lost). */
    private boolean check(PinnedSession session) {
        long sentAt = System.nanoTime();
        session.checked(sentAt);
        List<NamedLock> locks = new ArrayList<>(session.held().values());
        try {
            // Loss is per connection: a session that is still the same server session keeps every named lock it was
            // granted (only its own RELEASE_LOCK, or its end, frees one). One statement per connection checks that,
            // sampling one lock in turn (a reset session keeps its id but no lock); a sample found gone checks all.
            NamedLock sample = locks.get(Math.floorMod(session.nextCheck(), locks.size()));
            long[] sampled = SessionStatements.isUsedLocks(session.raw, List.of(sample.serverName));
            SessionStatements.checkSameSession(session, sampled[0]);
            if (sampled[1] != 0) {
                lifecycle.failSessionReadOnly(session);
                return false;
            }
            if (sampled[2] == session.connectionId) {
                confirm(session, sentAt);
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
                        session.held().remove(lock.serverName);
                        names.remove(lock.serverName, lock);
                        notifier.lose(lock, LockLostException.Reason.NOT_HELD, "Lock '" + lock.name + "' was lost: the"
                                + " server shows it " + (holder == 0 ? "free" : "held by connection " + holder)
                                + ", not by this instance's session " + session.connectionId, null);
                    }
                }
            }
        } catch (SQLException e) {
            if (!SessionStatements.endedBy(session, e)) {
                LOG.warnf("Checking a lock connection (server session %d) failed, it is checked again next period: %s",
                        session.connectionId, SqlErrors.describe(e));
                return true;
            }
            lifecycle.failSession(session, e);
            return false;
        }
        confirm(session, sentAt);
        if (session.held().isEmpty()) {
            lifecycle.discardLocked(session);
        }
        return true;
    }

    /** The session held its remaining locks when a check sent at {@code sentAt} ran. */
    private static void confirm(PinnedSession session, long sentAt) {
        session.confirmedAt = sentAt;
        session.confirmed = true;
    }

    // --- on demand ---

    /**
     * Makes sure the lock's session was checked after {@code sinceNanos}: its last confirmation if it came after that,
     * else a check now, waiting for the session's mutex up to statement-timeout (a session busy longer than that is in
     * a statement, which itself fails if the session is gone). A lock found lost is reported lost.
     */
    void confirm(NamedLock lock, long sinceNanos) {
        PinnedSession session = lock.session;
        if (session.confirmed && session.confirmedAt - sinceNanos >= 0) {
            return;
        }
        PinnedSession.Guard locked = lockForCheck(session);
        if (locked == null) {
            LOG.debugf("Lock '%s' was not confirmed: its session stayed inside a statement for %d ms", lock.name,
                    connections.statementTimeoutMillis());
            return;
        }
        try (locked) {
            if (!session.retired && session.held().get(lock.serverName) == lock
                    && !(session.confirmed && session.confirmedAt - sinceNanos >= 0)) {
                check(session);
            }
        }
    }

    /**
     * The session's lock within statement-timeout, or null. An interrupt left on the caller's thread (a Fault Tolerance
     * time-out) must not skip the check: it is cleared for the wait, and set again after it.
     */
    private PinnedSession.Guard lockForCheck(PinnedSession session) {
        boolean interrupted = Thread.interrupted();
        try {
            return session.tryLock(connections.statementTimeoutMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            interrupted = true;
            return null;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A database round trip, then the check of every session that holds locks and is not inside a statement. */
    EngineHealth health() {
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
        for (PinnedSession session : pinned.all()) {
            PinnedSession.Guard locked = session.tryLock();
            if (locked == null) {
                busy++; // in a statement, which itself fails if the session is gone
                continue;
            }
            try (locked) {
                if (!session.retired && !session.held().isEmpty()) {
                    checked++;
                    if (!check(session)) {
                        failed++;
                    }
                }
            }
        }
        data.put("locks held by this instance", names.size());
        data.put("pinned connections", pinned.size());
        data.put("pinned connections checked", checked);
        data.put("pinned connections in a statement", busy);
        return failed == 0 ? EngineHealth.up(data)
                : EngineHealth.down(failed + " pinned connection(s) failed their check: their locks were lost, and their"
                        + " holders told through onLost", data);
    }
}
