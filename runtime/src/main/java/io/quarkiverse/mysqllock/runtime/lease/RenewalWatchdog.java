package io.quarkiverse.mysqllock.runtime.lease;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockTimings;
import io.quarkiverse.mysqllock.runtime.engine.PeriodicWork;
import io.quarkiverse.mysqllock.runtime.fleet.Membership;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * The renewal watchdog: renews every lease this instance holds, and its membership of its fleet, in a few statements
 * per period; more often, and by the local clock alone, it reports lost each lease that cannot be confirmed before it
 * may have expired.
 */
final class RenewalWatchdog {

    private static final Logger LOG = Logger.getLogger(LeaseEngine.class);
    /** Leases renewed per statement; 10,000 leases take 5 statements. */
    static final int RENEW_CHUNK = 2000;

    private final ConnectionSource connections;
    private final LeaseStatements statements;
    private final LeaseRegistry held;
    private final Membership membership;
    private final ClockCheck clock;
    private final LockMetrics metrics;
    private final long ttlNanos;
    private final PeriodicWork watchdog;

    /** Starts the watchdog: a renewal every renewal interval, the expiry check twice per loss margin. */
    RenewalWatchdog(ConnectionSource connections, LeaseStatements statements, LeaseRegistry held, Membership membership,
            ClockCheck clock, LockMetrics metrics, LockTimings timings) {
        this.connections = connections;
        this.statements = statements;
        this.held = held;
        this.membership = membership;
        this.clock = clock;
        this.metrics = metrics;
        this.ttlNanos = timings.ttlNanos();
        // A thread each: a renewal stuck on a stalled network must neither keep the expiry check from telling holders,
        // nor the membership's renewal hold up the leases' (or the other way round).
        this.watchdog = new PeriodicWork("mysql-lock-renew-", 3);
        long period = timings.renewIntervalNanos();
        watchdog.every(period, period, "renewal of its leases", this::renewAll);
        // Half a period before the leases' (the two share the connection kept for housekeeping), not after: the
        // membership was registered before this watchdog started, and must be renewed twice before it counts as lapsed.
        watchdog.every(period / 2, period, "renewal of its membership", membership::renew);
        long checkPeriod = timings.expiryCheckNanos();
        watchdog.everyUnpaused(checkPeriod, checkPeriod, "expiry check of its leases", this::expireOverdue);
    }

    /** More periodic work on the watchdog's threads. */
    void alsoEvery(long periodNanos, String what, Runnable work) {
        watchdog.every(periodNanos, periodNanos, what, work);
    }

    PeriodicWork work() {
        return watchdog;
    }

    void shutdownNow() {
        watchdog.shutdownNow();
    }

    /** Reports the leases that may expire before another renewal could confirm them. Never blocks on the database. */
    private void expireOverdue() {
        membership.checkLapse();
        long now = System.nanoTime();
        for (Lease lease : held.all()) {
            if (lease.isHeld() && held.overdue(lease, now)) {
                held.expire(lease);
            }
        }
    }

    private void renewAll() {
        expireOverdue();
        List<Lease> leases = new ArrayList<>();
        for (Lease lease : held.all()) {
            if (lease.isHeld() && lease.renewable) {
                leases.add(lease);
            }
        }
        for (int from = 0; from < leases.size(); from += RENEW_CHUNK) {
            renew(leases.subList(from, Math.min(leases.size(), from + RENEW_CHUNK)), ttlNanos);
        }
        clock.checkIfDue();
    }

    /**
     * Moves the end of a capped lease to {@code lengthNanos} from now ({@code LockHandle.extend}): a renewal of that
     * length, on the caller's thread. Extensions of one lease run one at a time, so that its confirmed end is always
     * that of the statement the server ran last.
     *
     * @return true if extended, false if the database did not answer (the lease then counts as ending at the earlier of
     *         its former end and the new one)
     * @throws LockLostException if the lease is lost, found before or by the statement
     */
    boolean extend(Lease lease, long lengthNanos) {
        if (!BlockingOperationControl.isBlockingAllowed()) {
            throw new IllegalStateException("Extending lease '" + lease.name + "' runs a statement and was called on an"
                    + " event-loop thread. Call it on a worker thread");
        }
        if (lengthNanos <= held.shortestUsefulNanos()) {
            throw new IllegalArgumentException("Lease '" + lease.name + "' cannot be given a length of "
                    + TimeUnit.NANOSECONDS.toMillis(lengthNanos) + " ms: its holder counts a lease lost "
                    + TimeUnit.NANOSECONDS.toMillis(held.shortestUsefulNanos()) + " ms before its end (the loss margin, a"
                    + " tenth of quarkus.mysql-lock.lease.ttl, at most 250 ms), so it would be lost at once");
        }
        synchronized (lease.extending) {
            long now = System.nanoTime();
            if (lease.lost == null && held.overdue(lease, now)) {
                held.expire(lease);
            }
            // Before the statement: once it may have reached the server, the lease ends no later than the earlier of
            // its former end and the new one, whether its answer comes back or not.
            if (now + lengthNanos - lease.confirmedUntilNanos < 0) {
                lease.confirmedUntilNanos = now + lengthNanos;
            }
            boolean extended = false;
            if (lease.lost == null) {
                // the token records the lease's length, for those who watch the row
                lease.nextToken(TimeUnit.NANOSECONDS.toMicros(lengthNanos));
                extended = renew(List.of(lease), lengthNanos, true);
            }
            LockLostException lost = lease.lost;
            if (lost != null) {
                throw new LockLostException(lease.name, lost.reason(), "Lease '" + lease.name + "' was not extended: "
                        + lost.getMessage(), lost);
            }
            return extended;
        }
    }

    /**
     * Renews leases on the connection kept for the engines' housekeeping (an application holding every other connection
     * of the pool costs no lease), replacing it once if it died or reached a read-only server (a failover moves the pool
     * to the new primary, where the leases are); on a connection of its own while the kept one is in use.
     */
    private boolean renew(List<Lease> leases, long lengthNanos) {
        return renew(leases, lengthNanos, false);
    }

    /** {@code extension}: a capped lease's extension, whose token changes with its length. */
    private boolean renew(List<Lease> leases, long lengthNanos, boolean extension) {
        for (int attempt = 1; attempt <= 2; attempt++) {
            try {
                // A renewal that waits longer than a ttl is useless: give up the connection instead of hanging on it.
                return connections.housekeeping(TimeUnit.NANOSECONDS.toMillis(ttlNanos),
                        raw -> renewWithoutRowWaits(raw, connections.server(raw), leases, lengthNanos, extension));
            } catch (SQLException e) {
                boolean readOnly = SqlErrors.isReadOnly(e);
                if (readOnly) {
                    connections.readOnlyFound("renewal of " + leases.size() + " lease(s)");
                }
                if (attempt == 1 && (readOnly || SqlErrors.isConnectionFailure(e))) {
                    continue;
                }
                LOG.warnf("Renewing %d lease(s) failed, retrying next period; each is reported lost once it may have"
                        + " expired: %s", leases.size(), SqlErrors.describe(e));
            } catch (RuntimeException e) {
                LOG.warnf("Renewing %d lease(s) failed, retrying next period: %s", leases.size(), e.getMessage());
            }
            return false;
        }
        return false;
    }

    /**
     * Renews leases in one statement that waits for no row lock. A row a transaction holds (acquireForTransaction on a
     * leased name, a locking read of the fence) fails the statement at once, and then each half is renewed on its own:
     * the held row costs its own lease only, never the others of the batch.
     */
    private boolean renewWithoutRowWaits(Connection raw, ServerVersion server, List<Lease> leases, long lengthNanos,
            boolean extension) throws SQLException {
        return Statements.withoutRowWaits(raw, server,
                prefix -> extension ? extendOne(raw, prefix, leases.get(0), lengthNanos)
                        : renewSplitting(raw, prefix, leases, lengthNanos));
    }

    /** An extension's statement: false if the row was locked by a transaction. */
    private boolean extendOne(Connection raw, String prefix, Lease lease, long lengthNanos) throws SQLException {
        long sentAt = System.nanoTime();
        int extended;
        try {
            extended = statements.extend(raw, prefix, lease, lengthNanos);
        } catch (SQLException e) {
            if (!SqlErrors.isLockWaitTimeout(e)) {
                throw e;
            }
            LOG.debugf("Lease '%s' is locked by a transaction and was not extended", lease.name);
            stillOwned(raw, lease);
            return false;
        }
        metrics.renewed(extended);
        if (extended == 1) {
            lease.confirmedUntilNanos = sentAt + lengthNanos;
            lease.extended(); // the row has the new token
        } else {
            sortOut(raw, List.of(lease), sentAt + lengthNanos);
        }
        return true;
    }

    /** False if a lease was not asked about: its row was locked by a transaction. */
    private boolean renewSplitting(Connection raw, String prefix, List<Lease> leases, long lengthNanos)
            throws SQLException {
        long sentAt = System.nanoTime();
        int renewed;
        try {
            renewed = statements.renew(raw, prefix, leases, lengthNanos);
        } catch (SQLException e) {
            if (!SqlErrors.isLockWaitTimeout(e)) {
                throw e;
            }
            if (leases.size() == 1) {
                LOG.debugf("Lease '%s' is locked by a transaction and was not renewed", leases.get(0).name);
                stillOwned(raw, leases.get(0));
                return false;
            }
            int half = leases.size() / 2;
            boolean first = renewSplitting(raw, prefix, leases.subList(0, half), lengthNanos);
            return renewSplitting(raw, prefix, leases.subList(half, leases.size()), lengthNanos) && first;
        }
        metrics.renewed(renewed);
        if (renewed == leases.size()) {
            for (Lease lease : leases) {
                lease.confirmedUntilNanos = sentAt + lengthNanos;
            }
        } else {
            sortOut(raw, leases, sentAt + lengthNanos);
        }
        return true;
    }

    /**
     * A lease a row lock kept from being renewed: lost now if another instance took it or it was ended, found by a
     * plain read (no row lock); else tried again next period, its confirmed end unchanged.
     */
    private void stillOwned(Connection raw, Lease lease) throws SQLException {
        sortOut(raw, List.of(lease), lease.confirmedUntilNanos);
    }

    /** Some leases were not renewed: find out which, and why. */
    private void sortOut(Connection raw, List<Lease> leases, long confirmedUntil) throws SQLException {
        Map<String, String> owners = statements.owners(raw, leases);
        for (Lease lease : leases) {
            String owner = owners.get(lease.serverName);
            if (owner != null && lease.ownerTokens().contains(owner)) {
                lease.confirmedUntilNanos = confirmedUntil;
            } else if (owner != null) {
                held.lose(lease, LockLostException.Reason.NOT_HELD, "Lease '" + lease.name + "' was lost: " + owner
                        + " took it over, having seen it unrenewed for its whole length", null);
            } else if (owners.containsKey(lease.serverName)) {
                // only a give-up clears the owner, and this instance did not give it up
                held.lose(lease, LockLostException.Reason.NOT_HELD, "Lease '" + lease.name + "' was lost: another"
                        + " instance ended it (forceRelease), or took it over and gave it up", null);
            } else {
                held.lose(lease, LockLostException.Reason.NOT_HELD, "Lease '" + lease.name + "' was lost: its row"
                        + " was removed from the lock table", null);
            }
        }
    }
}
