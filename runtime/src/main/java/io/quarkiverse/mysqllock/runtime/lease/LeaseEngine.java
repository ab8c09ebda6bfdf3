package io.quarkiverse.mysqllock.runtime.lease;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.EngineHealth;
import io.quarkiverse.mysqllock.runtime.HoldEngine;
import io.quarkiverse.mysqllock.runtime.LockEngine;
import io.quarkiverse.mysqllock.runtime.LockHold;
import io.quarkiverse.mysqllock.runtime.LockMetrics;
import io.quarkiverse.mysqllock.runtime.LockTable;
import io.quarkiverse.mysqllock.runtime.LossNotifier;
import io.quarkiverse.mysqllock.runtime.ServerVersion;
import io.quarkiverse.mysqllock.runtime.SqlErrors;
import io.quarkiverse.mysqllock.runtime.fleet.Membership;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * The LEASE engine: one row per lock name in the lock table, owned until {@code expires_at}, a server time
 * ({@code UTC_TIMESTAMP(6)}), never the application's clock. A watchdog renews every lease this instance holds in a
 * few statements per period; a lease that cannot be confirmed before it may have expired is reported lost.
 * <p>
 * Works on replicated databases: the rows are replicated like any data (run it against the primary).
 */
public final class LeaseEngine implements LockEngine, HoldEngine<Lease> {

    private static final Logger LOG = Logger.getLogger(LeaseEngine.class);
    private static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final int DEADLOCK_RETRIES = 10;
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;
    /** The most a lease is given up before its confirmed end, so that the holder hears it before anyone can take over. */
    private static final long MAX_LOSS_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** Leases renewed per statement; 10,000 leases take 5 statements. */
    static final int RENEW_CHUNK = 2000;
    /** MariaDB: the statement after it waits for no row lock. */

    private final ConnectionSource connections;
    private final LockTable table;
    private final String identity;
    private final long ttlNanos;
    private final long ttlMicros;
    private final long maxBackoffNanos;
    /**
     * A lease counts as lost this long before its confirmed end: the expiry check runs twice within it, so the holder is
     * told before the server lets another instance take the lease.
     */
    private final long lossMarginNanos;
    /** quarkus.mysql-lock.lease.max-clock-skew. */
    private final long maxClockSkewNanos;
    private final ConcurrentHashMap<String, Lease> local = new ConcurrentHashMap<>();
    private final LocalGate.Gates gates = new LocalGate.Gates();
    private final LossNotifier notifier;
    private final LockMetrics metrics;
    private final ScheduledExecutorService watchdog;
    private final String take;
    private final String giveUp;
    private final String current;
    private volatile boolean closed;
    /** This instance's membership of its fleet: leases are taken only while it is confirmed. */
    private final Membership membership;

    public LeaseEngine(ConnectionSource connections, LockTable table, String identity, Duration ttl,
            Duration renewInterval, Duration maxClockSkew, LockMetrics metrics, Membership membership) {
        this.metrics = metrics;
        this.membership = membership;
        membership.listen(new Membership.Listener() {
            @Override
            public void lapsed() {
                loseAll(membership.lapseMessage());
            }

            @Override
            public void out(String why) {
                loseAll(why);
            }
        });
        this.notifier = new LossNotifier(metrics, LockMode.LEASE);
        this.connections = connections;
        this.table = table;
        this.identity = identity;
        this.ttlNanos = ttl.toNanos();
        this.ttlMicros = TimeUnit.NANOSECONDS.toMicros(ttlNanos);
        this.maxBackoffNanos = Math.min(MAX_BACKOFF_NANOS, ttlNanos / 4);
        this.lossMarginNanos = lossMargin(ttlNanos);
        this.maxClockSkewNanos = maxClockSkew.toNanos();
        String t = table.name();
        this.take = takeStatement(t);
        this.giveUp = giveUpStatement(t);
        this.current = "SELECT owner, acquired_at, fence FROM " + t + " WHERE name = ? AND expires_at > UTC_TIMESTAMP(6)";
        // Two threads: a renewal stuck on a stalled network must not keep the expiry check from telling holders.
        this.watchdog = Executors.newScheduledThreadPool(2, ConnectionSource.daemonThreads("mysql-lock-renew-"));
        long period = renewInterval.toNanos();
        watchdog.scheduleWithFixedDelay(this::renewAll, period, period, TimeUnit.NANOSECONDS);
        long checkPeriod = Math.max(TimeUnit.MILLISECONDS.toNanos(5), Math.min(period, lossMarginNanos / 2));
        watchdog.scheduleWithFixedDelay(this::expireOverdue, checkPeriod, checkPeriod, TimeUnit.NANOSECONDS);
    }

    /** Every lease held is lost: the fleet may have moved to named locks, which leases do not exclude. */
    private void loseAll(String why) {
        for (Lease lease : List.copyOf(local.values())) {
            if (lease.isHeld()) {
                lose(lease, LockLostException.Reason.MEMBERSHIP_LOST, "Lease '" + lease.name + "' was lost: " + why, null);
            }
        }
    }

    @Override
    public LockMode mode() {
        return LockMode.LEASE;
    }

    // --- acquire ---

    @Override
    public ControlledHandle acquire(String name, String serverName, long waitNanos, boolean throwIfBusy,
            boolean reentrant, long leaseCapNanos) {
        ensureOpen();
        long start = System.nanoTime();
        long deadline = start + waitNanos;
        return membership.granting(name, waitNanos,
                () -> acquireConfirmed(name, serverName, start, deadline, throwIfBusy, reentrant, leaseCapNanos));
    }

    private ControlledHandle acquireConfirmed(String name, String serverName, long start, long deadline,
            boolean throwIfBusy, boolean reentrant, long leaseCapNanos) {
        Thread me = reentrant ? Thread.currentThread() : null;
        Lease mine = local.get(serverName);
        if (mine != null && mine.ownedBy(me)) {
            synchronized (mine) {
                if (mine.isHeld() && mine.holds > 0) {
                    mine.holds++;
                    return new LockHold<>(mine, this, me);
                }
            }
        }
        LocalGate gate = gates.enter(serverName);
        boolean passed = false;
        Lease lease = null;
        try {
            passed = gate.pass(deadline - System.nanoTime());
            if (!passed) {
                return busy(name, serverName, start, throwIfBusy, describeLocal(serverName));
            }
            lease = takeOnServer(name, serverName, gate, start, deadline, throwIfBusy, leaseCapNanos);
            if (lease == null) {
                return null;
            }
            local.put(serverName, lease);
            // Read after the lease is visible: a lapse reported later finds it (and reports it lost).
            if (closed) {
                undoTake(lease);
                throw new IllegalStateException("The lock manager is shut down");
            }
            if (!membership.confirmed(System.nanoTime())) {
                // The membership lapsed while the lease was taken: the fleet may have moved to named locks.
                undoTake(lease);
                throw new Membership.Unconfirmed();
            }
            return new LockHold<>(lease, this, me);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(name, Duration.ofNanos(System.nanoTime() - start), Reason.DATABASE_ERROR,
                    null, "Interrupted while waiting for lock '" + name + "'", e);
        } finally {
            if (lease == null) {
                if (passed) {
                    gate.open();
                }
                gates.leave(serverName, gate);
            }
        }
    }

    private Lease takeOnServer(String name, String serverName, LocalGate gate, long start, long deadline,
            boolean throwIfBusy, long leaseCapNanos) throws InterruptedException {
        long leaseNanos = leaseCapNanos > 0 ? leaseCapNanos : ttlNanos;
        String ownerToken = identity + "#" + UUID.randomUUID().toString().substring(0, 13);
        attempts: for (int attempt = 1;; attempt++) {
            // Confirmed before a connection is borrowed: a renewal of the membership needs one of its own, and
            // acquisitions holding every connection of the pool while they wait for it would starve it.
            membership.confirmBeforeGrant(name, connections.budgetNanos(deadline - System.nanoTime()));
            ConnectionSource.Borrowed borrowed = null;
            try {
                borrowed = connections.borrowForStatements(name, deadline - System.nanoTime());
                Connection raw = borrowed.raw();
                boolean seeded = false;
                boolean rowLocked = false;
                int rowLockRetries = 0;
                long backoff = FIRST_BACKOFF_NANOS;
                ServerVersion server = connections.server(raw);
                while (true) {
                    if (!membership.confirmed(System.nanoTime())) {
                        attempt--; // not a dead connection: confirm again with this one given back
                        continue attempts;
                    }
                    long sentAt = System.nanoTime();
                    long fence;
                    try {
                        fence = table.withTable(raw,
                                () -> retryingDeadlocks(() -> take(raw, server, serverName, ownerToken, leaseNanos)));
                    } catch (SQLException e) {
                        if (!SqlErrors.isLockWaitTimeout(e)) {
                            throw e;
                        }
                        // A transaction holds the row (acquireForTransaction, a locking read of the fence), or the next
                        // one, which a take of a name without a row also locks (a renewal of other leases, for a moment):
                        // busy for now; the row may still be missing.
                        fence = 0;
                        rowLocked = true;
                    }
                    if (fence > 0) {
                        return new Lease(name, serverName, Instant.now(), ownerToken, fence, gate, leaseCapNanos == 0,
                                sentAt + leaseNanos);
                    }
                    if (!seeded) {
                        Optional<Boolean> created = seedWithoutRowWaits(raw, server, serverName);
                        seeded = created.isPresent();
                        rowLocked |= created.isEmpty();
                        if (created.orElse(false)) {
                            continue;
                        }
                    }
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0 && rowLocked && rowLockRetries < ROW_LOCK_RETRIES) {
                        // A row or gap locked for the moment of another statement (a renewal of other leases) is no
                        // reason to answer busy: look again, a few milliseconds later.
                        rowLockRetries++;
                        rowLocked = false;
                        TimeUnit.MILLISECONDS.sleep(5);
                        continue;
                    }
                    if (remaining <= 0) {
                        String holder = throwIfBusy ? describe(raw, serverName) : null;
                        busy(name, serverName, start, throwIfBusy, holder);
                        return null;
                    }
                    // Full jitter: waiters of several instances spread out instead of polling in step.
                    long pause = Math.min(remaining, ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1));
                    TimeUnit.NANOSECONDS.sleep(pause);
                    backoff = Math.min(backoff * 2, maxBackoffNanos);
                }
            } catch (SQLException e) {
                if (borrowed != null) {
                    connections.discard(borrowed.pooled());
                    borrowed = null;
                }
                boolean readOnly = SqlErrors.isReadOnly(e);
                if (readOnly) {
                    // A replica, or a primary demoted by a failover: new connections may reach the writable server.
                    connections.readOnlyFound("lease '" + name + "'");
                }
                if ((readOnly || SqlErrors.isConnectionFailure(e)) && attempt < MAX_STALE_CONNECTIONS) {
                    LOG.debugf(e, "Replacing a dead or read-only pooled connection for lock '%s'", name);
                    continue;
                }
                throw new LockNotAcquiredException(name, Duration.ofNanos(System.nanoTime() - start),
                        readOnly ? Reason.READ_ONLY : Reason.DATABASE_ERROR, null, "Lock '" + name + "' was not acquired: "
                                + (readOnly ? "the lock database is read-only (a replica, or a primary demoted by a"
                                        + " failover), and new connections still reach a read-only server: " : "")
                                + SqlErrors.describe(e),
                        e);
            } finally {
                if (borrowed != null) {
                    connections.giveBack(borrowed);
                }
            }
        }
    }

    /**
     * The acquiring statement (parameters: owner token, lease in microseconds, name): takes a free or expired lease and
     * returns the new fence through {@code LAST_INSERT_ID}. Public for the benchmarks' floor, which issues it raw.
     */
    public static String takeStatement(String table) {
        return "UPDATE " + table + " SET owner = ?, acquired_at = UTC_TIMESTAMP(6),"
                + " expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, fence = LAST_INSERT_ID(fence + 1)"
                + " WHERE name = ? AND expires_at <= UTC_TIMESTAMP(6)";
    }

    /** The releasing statement (parameters: name, owner token): only the owner's lease ends. */
    public static String giveUpStatement(String table) {
        return "UPDATE " + table + " SET owner = NULL, expires_at = '1970-01-01 00:00:00' WHERE name = ? AND owner = ?";
    }

    /**
     * One attempt: the new fence if the lease was free or expired, else 0. On MariaDB it waits for no row lock (error
     * 1205 at once), so that a transaction holding the row keeps no caller past its wait.
     */
    private long take(Connection raw, ServerVersion server, String serverName, String ownerToken, long leaseNanos)
            throws SQLException {
        PreparedStatement statement = connections.statements().prepare(raw, server.setStatement() ? ConnectionSource.NO_ROW_WAIT + take : take,
                true);
        statement.setString(1, ownerToken);
        statement.setLong(2, TimeUnit.NANOSECONDS.toMicros(leaseNanos));
        statement.setString(3, serverName);
        return LockTable.updateReturningFence(statement, serverName);
    }

    /**
     * Makes sure the name's row exists, waiting for no row lock (an {@code INSERT} into a gap another statement locks
     * would wait for it, beyond the caller's wait): whether this call created it, or empty if the gap was locked.
     */
    private Optional<Boolean> seedWithoutRowWaits(Connection raw, ServerVersion server, String serverName)
            throws SQLException {
        try {
            return Optional.of(retryingDeadlocks(() -> ConnectionSource.withoutRowWaits(raw, server,
                    prefix -> table.seedWithoutWaiting(raw, prefix, serverName))));
        } catch (SQLException e) {
            if (SqlErrors.isLockWaitTimeout(e)) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** How often an acquisition whose wait is over looks again at a row that was only locked. */
    private static final int ROW_LOCK_RETRIES = 3;

    private static <T> T retryingDeadlocks(LockTable.SqlWork<T> work) throws SQLException {
        for (int attempt = 1;; attempt++) {
            try {
                return work.run();
            } catch (SQLException e) {
                if (!SqlErrors.isDeadlock(e) || attempt >= DEADLOCK_RETRIES) {
                    throw e;
                }
                LOG.debugf("Deadlock on the lock table, retrying (%d)", attempt);
            }
        }
    }

    private ControlledHandle busy(String name, String serverName, long start, boolean throwIfBusy, String holder) {
        if (!throwIfBusy) {
            return null;
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        throw new LockNotAcquiredException(name, waited, Reason.BUSY, holder, "Lock '" + name + "' is held by "
                + (holder == null ? "another instance" : holder) + "; not acquired within " + waited.toMillis() + " ms",
                null);
    }

    private String describeLocal(String serverName) {
        Lease lease = local.get(serverName);
        return lease == null ? "another thread of this instance" : describe(lease);
    }

    private static String describe(Lease lease) {
        Thread owner = lease.owner();
        return lease.ownerToken + (owner == null ? " (asynchronous or handed over)" : " (thread '" + owner.getName() + "')");
    }

    private String describe(Connection raw, String serverName) throws SQLException {
        try (PreparedStatement statement = raw.prepareStatement(current)) {
            statement.setString(1, serverName);
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    // --- release ---

    @Override
    public void release(Lease lease) {
        if (!BlockingOperationControl.isBlockingAllowed()) {
            connections.executor().execute(() -> release(lease));
            return;
        }
        synchronized (lease) {
            if (--lease.holds > 0 || lease.released) {
                return;
            }
            lease.released = true;
        }
        local.remove(lease.serverName, lease);
        try {
            if (lease.lost != null) {
                if (lease.lost.reason() != LockLostException.Reason.NOT_HELD) {
                    // Given up locally before its end on the server (a renewal may still have extended it): only
                    // this acquisition's owner token matches, so another holder's lease is never touched.
                    giveUpOnServer(lease);
                }
            } else {
                long now = System.nanoTime();
                if (membership.lapsed(now)) {
                    notifier.loseAtRelease(lease, LockLostException.Reason.MEMBERSHIP_LOST, "Lease '" + lease.name
                            + "' was lost before it was released: " + membership.lapseMessage(), null);
                }
                if (overdue(lease, now)) {
                    notifier.loseAtRelease(lease, LockLostException.Reason.LEASE_EXPIRED, "Lease '" + lease.name
                            + "' was lost before it was released: it was not renewed in time and may have expired", null);
                }
                if (giveUpOnServer(lease) == 0) {
                    notifier.loseAtRelease(lease, LockLostException.Reason.NOT_HELD, "Lease '" + lease.name
                            + "' was lost before it was released: it had expired, or another instance had taken it", null);
                }
            }
        } finally {
            openGate(lease);
        }
    }

    @Override
    public void abandon(Lease lease, String message) {
        lose(lease, LockLostException.Reason.CANCELLED, message, null);
        release(lease);
    }

    /** Gives back a lease taken but never handed out, telling no one. */
    private void undoTake(Lease lease) {
        synchronized (lease) {
            lease.released = true;
        }
        local.remove(lease.serverName, lease);
        try {
            giveUpOnServer(lease);
        } finally {
            openGate(lease);
        }
    }

    /** Gives the lease up on the server: 1 if it was still ours, 0 if not, -1 if that could not be found out. */
    private int giveUpOnServer(Lease lease) {
        for (int attempt = 1;; attempt++) {
            ConnectionSource.Borrowed borrowed = null;
            try {
                borrowed = connections.borrowForStatements(lease.name, 0);
                Connection raw = borrowed.raw();
                int released = retryingDeadlocks(() -> {
                    PreparedStatement statement = connections.statements().prepare(raw, giveUp);
                    statement.setString(1, lease.serverName);
                    statement.setString(2, lease.ownerToken);
                    return statement.executeUpdate();
                });
                connections.giveBack(borrowed);
                return released;
            } catch (SQLException e) {
                if (borrowed != null) {
                    connections.discard(borrowed.pooled());
                }
                boolean readOnly = SqlErrors.isReadOnly(e);
                if (readOnly) {
                    connections.readOnlyFound("release of lease '" + lease.name + "'");
                }
                if (!(readOnly || SqlErrors.isConnectionFailure(e)) || attempt >= MAX_STALE_CONNECTIONS) {
                    LOG.warnf("Could not release lease '%s' (%s): it ends by itself when it expires", lease.name,
                            SqlErrors.describe(e));
                    return -1;
                }
            } catch (LockNotAcquiredException e) {
                LOG.warnf("Could not release lease '%s' (%s): it ends by itself when it expires", lease.name,
                        e.getMessage());
                return -1;
            }
        }
    }

    private void openGate(Lease lease) {
        if (lease.gateOpened.compareAndSet(false, true)) {
            lease.gate.open();
            gates.leave(lease.serverName, lease.gate);
        }
    }

    private void lose(Lease lease, LockLostException.Reason reason, String message, Throwable cause) {
        notifier.lose(lease, reason, message, cause);
        local.remove(lease.serverName, lease);
        // Other threads of this instance may now compete for the name.
        openGate(lease);
    }

    @Override
    public long fencingToken(Lease lease) {
        return lease.fence;
    }

    // --- renewal ---

    /**
     * Whether the lease may have ended, or be taken by a server whose clock is up to max-clock-skew ahead of the one
     * that renewed it.
     */
    private boolean overdue(Lease lease, long now) {
        return now - (lease.confirmedUntilNanos - lossMarginNanos - maxClockSkewNanos) >= 0;
    }

    /** How long before its confirmed end a holder counts its lease lost, clock skew aside: a tenth of the ttl, at most 250 ms. */
    public static long lossMargin(long ttlNanos) {
        return Math.min(MAX_LOSS_MARGIN_NANOS, ttlNanos / 10);
    }

    /** Reports the leases that may expire before another renewal could confirm them. Never blocks on the database. */
    private void expireOverdue() {
        membership.checkLapse();
        long now = System.nanoTime();
        for (Lease lease : local.values()) {
            if (lease.isHeld() && overdue(lease, now)) {
                expire(lease);
            }
        }
    }

    private void expire(Lease lease) {
        lose(lease, LockLostException.Reason.LEASE_EXPIRED, lease.renewable
                ? "Lease '" + lease.name + "' was lost: it could not be renewed before it expired (ttl "
                        + TimeUnit.NANOSECONDS.toMillis(ttlNanos) + " ms)"
                : "Lease '" + lease.name + "' expired: it reached its atMostFor cap", null);
    }

    @Override
    public boolean isValid(Lease lease) {
        if (lease.lost == null && overdue(lease, System.nanoTime())) {
            expire(lease);
        }
        return lease.lost == null;
    }

    private void renewAll() {
        expireOverdue();
        membership.renew();
        List<Lease> leases = new ArrayList<>();
        for (Lease lease : local.values()) {
            if (lease.isHeld() && lease.renewable) {
                leases.add(lease);
            }
        }
        for (int from = 0; from < leases.size(); from += RENEW_CHUNK) {
            renew(leases.subList(from, Math.min(leases.size(), from + RENEW_CHUNK)));
        }
        if (System.nanoTime() - lastSkewCheckNanos >= SKEW_CHECK_NANOS) {
            lastSkewCheckNanos = System.nanoTime();
            try {
                connections.query("(clock check)", "check the database servers' clocks", raw -> {
                    noteClockAhead(clockAheadMicros(raw));
                    return null;
                });
            } catch (RuntimeException e) {
                LOG.debugf("Checking the servers' clocks failed: %s", e.getMessage());
            }
        }
    }

    private static final long SKEW_CHECK_NANOS = TimeUnit.SECONDS.toNanos(10);
    private volatile long lastSkewCheckNanos = System.nanoTime() - SKEW_CHECK_NANOS;
    /** The last reading of how far ahead of this server another one's clock was seen, beyond max-clock-skew; or 0. */
    private volatile long skewBeyondBoundMicros;

    /**
     * How far the latest take or membership confirmation in the lock table lies in the future of this server's clock:
     * a server whose clock is ahead writes them "in the future" of the others (replication delay only shortens it),
     * and every instance confirms its membership at each renewal. 0 or less when no server is seen ahead.
     * <p>
     * {@code UTC_TIMESTAMP(6)} is the time the statement began, and a statement can wait before it reads (a Galera
     * node's causality wait, a metadata lock): rows committed meanwhile lie after its start without any clock ahead
     * (a 10-minute Galera fault run with equal clocks had every worker report one). So the wait, from the statement's
     * start to a {@code SYSDATE(6)} taken once the table was read (the derived table is read first), is deducted.
     */
    private long clockAheadMicros(Connection raw) throws SQLException {
        try (Statement statement = raw.createStatement(); ResultSet rs = statement.executeQuery(
                "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), latest)"
                        + " - GREATEST(0, TIMESTAMPDIFF(MICROSECOND, NOW(6), SYSDATE(6)))"
                        + " FROM (SELECT MAX(acquired_at) AS latest FROM " + table.name() + ") AS taken")) {
            return rs.next() ? rs.getLong(1) : 0;
        } catch (SQLException e) {
            if (SqlErrors.isMissingTable(e)) {
                return 0; // created at the first acquisition
            }
            throw e;
        }
    }

    /** Logs a clock seen ahead by more than max-clock-skew, once per episode, and when it is back within. */
    private void noteClockAhead(long aheadMicros) {
        long boundMicros = TimeUnit.NANOSECONDS.toMicros(maxClockSkewNanos);
        long previous = skewBeyondBoundMicros;
        LOG.debugf("Latest take in the lock table: %d ms in this server's future (max-clock-skew %d ms)",
                aheadMicros / 1000, boundMicros / 1000);
        if (aheadMicros > boundMicros) {
            skewBeyondBoundMicros = aheadMicros;
            if (previous == 0) {
                LOG.warnf("%s", skewProblem(aheadMicros));
            }
        } else if (previous != 0) {
            skewBeyondBoundMicros = 0;
            LOG.infof("No lock-table row lies further in the future than quarkus.mysql-lock.lease.max-clock-skew=%d ms"
                    + " any more", TimeUnit.NANOSECONDS.toMillis(maxClockSkewNanos));
        }
    }

    private String skewProblem(long aheadMicros) {
        return "a database server's clock runs ahead of this one's by at least " + aheadMicros / 1000 + " ms (a lease"
                + " taken there lies in this server's future), more than quarkus.mysql-lock.lease.max-clock-skew="
                + TimeUnit.NANOSECONDS.toMillis(maxClockSkewNanos) + "ms: a server ahead can grant a lease its holder"
                + " still believes it holds. Synchronise the servers' clocks (NTP), or raise max-clock-skew (and the"
                + " ttl)";
    }

    /**
     * Renews leases, on a connection of its own, replacing it once if it died or reached a read-only server (a
     * failover moves the pool to the new primary, where the leases are).
     */
    private void renew(List<Lease> leases) {
        for (int attempt = 1; attempt <= 2; attempt++) {
            ConnectionSource.Borrowed borrowed = null;
            try {
                borrowed = connections.borrowForStatements("(renewal)", 0);
                Connection raw = borrowed.raw();
                // A renewal that waits longer than a ttl is useless: give up the connection instead of hanging on it.
                ConnectionSource.bound(raw, TimeUnit.NANOSECONDS.toMillis(ttlNanos));
                renewWithoutRowWaits(raw, connections.server(raw), leases);
                connections.giveBack(borrowed);
                return;
            } catch (SQLException e) {
                if (borrowed != null) {
                    connections.discard(borrowed.pooled());
                }
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
                if (borrowed != null) {
                    connections.discard(borrowed.pooled());
                }
                LOG.warnf("Renewing %d lease(s) failed, retrying next period: %s", leases.size(), e.getMessage());
            }
            return;
        }
    }

    /**
     * Renews leases in one statement that waits for no row lock. A row a transaction holds (acquireForTransaction on a
     * leased name, a locking read of the fence) fails the statement at once, and then each half is renewed on its own:
     * the held row costs its own lease only, never the others of the batch.
     */
    private void renewWithoutRowWaits(Connection raw, ServerVersion server, List<Lease> leases) throws SQLException {
        ConnectionSource.withoutRowWaits(raw, server, prefix -> {
            renewSplitting(raw, prefix, leases);
            return null;
        });
    }

    private void renewSplitting(Connection raw, String prefix, List<Lease> leases) throws SQLException {
        long sentAt = System.nanoTime();
        int renewed;
        try {
            renewed = retryingDeadlocks(() -> renewStatement(raw, prefix, leases));
        } catch (SQLException e) {
            if (!SqlErrors.isLockWaitTimeout(e)) {
                throw e;
            }
            if (leases.size() == 1) {
                LOG.debugf("Lease '%s' is locked by a transaction and was not renewed", leases.get(0).name);
                return;
            }
            int half = leases.size() / 2;
            renewSplitting(raw, prefix, leases.subList(0, half));
            renewSplitting(raw, prefix, leases.subList(half, leases.size()));
            return;
        }
        metrics.renewed(renewed);
        if (renewed == leases.size()) {
            for (Lease lease : leases) {
                lease.confirmedUntilNanos = sentAt + ttlNanos;
            }
        } else {
            sortOut(raw, leases, sentAt);
        }
    }

    private int renewStatement(Connection raw, String prefix, List<Lease> leases) throws SQLException {
        StringBuilder sql = new StringBuilder(prefix).append("UPDATE ").append(table.name())
                .append(" SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE expires_at > UTC_TIMESTAMP(6)");
        // Owner tokens are unique per acquisition, so a row matches both lists only for its own lease.
        appendIn(sql.append(" AND name IN ("), leases.size());
        appendIn(sql.append(" AND owner IN ("), leases.size());
        try (PreparedStatement statement = raw.prepareStatement(sql.toString())) {
            int index = 1;
            statement.setLong(index++, ttlMicros);
            for (Lease lease : leases) {
                statement.setString(index++, lease.serverName);
            }
            for (Lease lease : leases) {
                statement.setString(index++, lease.ownerToken);
            }
            return statement.executeUpdate();
        }
    }

    private static void appendIn(StringBuilder sql, int count) {
        for (int i = 0; i < count; i++) {
            sql.append(i == 0 ? "?" : ", ?");
        }
        sql.append(')');
    }

    /** Some leases were not renewed: find out which, and why. */
    private void sortOut(Connection raw, List<Lease> leases, long sentAt) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT name, owner, expires_at > UTC_TIMESTAMP(6) FROM ")
                .append(table.name());
        appendIn(sql.append(" WHERE name IN ("), leases.size());
        Map<String, String> owners = new HashMap<>();
        Map<String, Boolean> valid = new HashMap<>();
        try (PreparedStatement statement = raw.prepareStatement(sql.toString())) {
            for (int i = 0; i < leases.size(); i++) {
                statement.setString(i + 1, leases.get(i).serverName);
            }
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    owners.put(rs.getString(1), rs.getString(2));
                    valid.put(rs.getString(1), rs.getBoolean(3));
                }
            }
        }
        for (Lease lease : leases) {
            String owner = owners.get(lease.serverName);
            if (lease.ownerToken.equals(owner) && Boolean.TRUE.equals(valid.get(lease.serverName))) {
                lease.confirmedUntilNanos = sentAt + ttlNanos;
            } else if (owner != null && !lease.ownerToken.equals(owner)) {
                lose(lease, LockLostException.Reason.NOT_HELD, "Lease '" + lease.name + "' was lost: it expired and "
                        + owner + " took it over", null);
            } else {
                lose(lease, LockLostException.Reason.LEASE_EXPIRED,
                        "Lease '" + lease.name + "' was lost: it expired before it could be renewed", null);
            }
        }
    }

    // --- queries ---

    @Override
    public boolean isLocked(String name, String serverName) {
        return inspect(name, serverName).isPresent();
    }

    @Override
    public Optional<LockInfo> inspect(String name, String serverName) {
        Lease mine = local.get(serverName);
        if (mine != null && mine.isHeld()) {
            return Optional.of(info(mine));
        }
        ensureOpen();
        return connections.query(name, "read the state of lock '" + name + "'", raw -> {
            try (PreparedStatement statement = raw.prepareStatement(current)) {
                statement.setString(1, serverName);
                try (ResultSet rs = statement.executeQuery()) {
                    return rs.next() ? Optional.of(new LockInfo(name, rs.getString(1), instant(rs.getTimestamp(2)),
                            rs.getLong(3), LockMode.LEASE)) : Optional.<LockInfo> empty();
                }
            } catch (SQLException e) {
                if (SqlErrors.isMissingTable(e)) {
                    return Optional.<LockInfo> empty();
                }
                throw e;
            }
        });
    }

    @Override
    public List<LockInfo> holders() {
        ensureOpen();
        return connections.query("(holders)", "list the lock holders", raw -> {
            List<LockInfo> infos = new ArrayList<>();
            try (PreparedStatement statement = raw.prepareStatement("SELECT name, owner, acquired_at, fence FROM "
                    + table.name() + " WHERE owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) AND name NOT LIKE '~%'"
                    + " ORDER BY name");
                    ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    String serverName = rs.getString(1);
                    Lease mine = local.get(serverName);
                    boolean ours = mine != null && mine.isHeld() && mine.ownerToken.equals(rs.getString(2));
                    infos.add(new LockInfo(serverName, ours ? describe(mine) : rs.getString(2),
                            ours ? mine.since : instant(rs.getTimestamp(3)), rs.getLong(4), LockMode.LEASE));
                }
            } catch (SQLException e) {
                if (!SqlErrors.isMissingTable(e)) {
                    throw e;
                }
            }
            return infos;
        });
    }

    @Override
    public boolean forceRelease(String name, String serverName) {
        ensureOpen();
        boolean ended = connections.query(name, "force-release lease '" + name + "'", raw -> {
            try (PreparedStatement statement = raw.prepareStatement("UPDATE " + table.name() + " SET owner = NULL,"
                    + " expires_at = '1970-01-01 00:00:00' WHERE name = ? AND expires_at > UTC_TIMESTAMP(6)")) {
                statement.setString(1, serverName);
                return statement.executeUpdate() == 1;
            }
        });
        Lease mine = local.get(serverName);
        if (mine != null && mine.isHeld()) {
            lose(mine, LockLostException.Reason.NOT_HELD, "Lease '" + name + "' was force-released", null);
        }
        if (ended) {
            LOG.warnf("Lease '%s' was force-released%s", name, mine != null ? " (this instance held it)" : "");
        }
        return ended;
    }

    /** {@code DATETIME} columns hold UTC here: read them without any time-zone shift. */
    private static Instant instant(Timestamp timestamp) {
        return timestamp == null ? null : timestamp.toLocalDateTime().toInstant(ZoneOffset.UTC);
    }

    @Override
    public List<LockInfo> held() {
        List<LockInfo> infos = new ArrayList<>();
        for (Lease lease : local.values()) {
            if (lease.isHeld()) {
                infos.add(info(lease));
            }
        }
        return infos;
    }

    private LockInfo info(Lease lease) {
        return new LockInfo(lease.name, describe(lease), lease.since, lease.fence, LockMode.LEASE);
    }

    /** The server's clock in microseconds, and how many leases are held (0 before the table exists). */
    private long[] serverTimeAndLeases(Connection raw) throws SQLException {
        try (Statement statement = raw.createStatement(); ResultSet rs = statement.executeQuery(
                "SELECT UTC_TIMESTAMP(6), (SELECT COUNT(*) FROM " + table.name()
                        + " WHERE owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) AND name NOT LIKE '~%')")) {
            rs.next();
            return new long[] { micros(rs.getTimestamp(1)), rs.getLong(2) };
        } catch (SQLException e) {
            if (!SqlErrors.isMissingTable(e)) {
                throw e;
            }
            // created at the first acquisition
            try (Statement statement = raw.createStatement();
                    ResultSet rs = statement.executeQuery("SELECT UTC_TIMESTAMP(6)")) {
                rs.next();
                return new long[] { micros(rs.getTimestamp(1)), 0 };
            }
        }
    }

    /** A server clock reading and the local monotonic time it was taken at. */
    private record ClockSample(long serverMicros, long localNanos) {
    }

    private volatile ClockSample lastClockSample;

    /**
     * The database answers, and the server's clock, which alone times leases, advanced like this instance's monotonic
     * clock since the previous check (a clock step would end leases early or late).
     */
    @Override
    public EngineHealth health() {
        Map<String, Object> data = new LinkedHashMap<>();
        long sent = System.nanoTime();
        long[] reading;
        try {
            reading = connections.query("(health)", "check the lock database", raw -> {
                long[] state = serverTimeAndLeases(raw);
                long answeredAt = System.nanoTime();
                // the clock check on the same connection, after the round trip was measured
                return new long[] { state[0], state[1], answeredAt, clockAheadMicros(raw) };
            });
        } catch (RuntimeException e) {
            return EngineHealth.down("the lock database does not answer: " + e.getMessage(), data);
        }
        long received = reading[2];
        long aheadMicros = reading[3];
        noteClockAhead(aheadMicros);
        long roundTripMicros = TimeUnit.NANOSECONDS.toMicros(received - sent);
        data.put("database round trip ms", roundTripMicros / 1000);
        data.put("leases held (all instances)", reading[1]);
        data.put("leases held by this instance", local.size());
        data.put("server clock minus this instance's clock ms",
                (reading[0] - micros(Instant.now())) / 1000);
        data.put("latest take ahead of this server's clock ms", Math.max(0, aheadMicros) / 1000);
        if (aheadMicros > TimeUnit.NANOSECONDS.toMicros(maxClockSkewNanos)) {
            return EngineHealth.down(skewProblem(aheadMicros), data);
        }
        ClockSample previous = lastClockSample;
        ClockSample sample = new ClockSample(reading[0], sent);
        lastClockSample = sample;
        if (previous != null) {
            long localMicros = TimeUnit.NANOSECONDS.toMicros(sample.localNanos() - previous.localNanos());
            long drift = (sample.serverMicros() - previous.serverMicros()) - localMicros;
            // slack: this check's round trip, the loss margin, and 1,000 ppm of rate difference (NTP slews at 500)
            long allowed = roundTripMicros + TimeUnit.NANOSECONDS.toMicros(lossMarginNanos) + localMicros / 1000;
            data.put("server clock drift since the previous check ms", drift / 1000);
            if (Math.abs(drift) > allowed) {
                return EngineHealth.down("the server clock " + (drift > 0 ? "jumped forward" : "went back") + " by "
                        + Math.abs(drift) / 1000 + " ms relative to this instance's clock since the previous check, "
                        + localMicros / 1000 + " ms ago: leases (ttl " + TimeUnit.NANOSECONDS.toMillis(ttlNanos)
                        + " ms) may end early or late. Check the database server's time synchronisation", data);
            }
        }
        return EngineHealth.up(data);
    }

    private static long micros(Timestamp timestamp) {
        return micros(instant(timestamp));
    }

    private static long micros(Instant instant) {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1000;
    }

    /** In-JVM gates in use: a measure of leaks for tests. */
    public int gatesInUse() {
        return gates.size();
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
        watchdog.shutdownNow();
        for (Lease lease : List.copyOf(local.values())) {
            if (!lease.isHeld()) {
                continue;
            }
            notifier.lose(lease, LockLostException.Reason.SHUTDOWN,
                    "Lease '" + lease.name + "' was released because the application is shutting down", null);
            giveUpOnServer(lease);
            local.remove(lease.serverName, lease);
            openGate(lease);
        }
        membership.leave();
        notifier.close();
        connections.close();
    }
}
