package io.quarkiverse.mysqllock.runtime.lease;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.runtime.engine.GrantingEngine;
import io.quarkiverse.mysqllock.runtime.engine.HoldHandle;
import io.quarkiverse.mysqllock.runtime.engine.LocalGate;
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
import io.quarkiverse.mysqllock.runtime.table.LeaseAdministration;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.ServerClock;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * The LEASE engine: one row per lock name in the lock table, owned by one acquisition's token. A watchdog renews every
 * lease this instance holds in a few statements per period; a lease that cannot be confirmed before it may be taken
 * over is reported lost, by this instance's monotonic clock. No server clock decides who holds a lease: another
 * instance takes one over only once it saw it unchanged for the lease's length ({@link Observations}), or when its end,
 * by the taking server's clock, lies further in the past than max-clock-skew (its holder long dead).
 * <p>
 * Works on replicated databases: the rows are replicated like any data (run it against the primary).
 * <p>
 * This class is the entry point: it routes acquisitions through the in-JVM gates to the {@link TakeLoop}; releases to
 * {@link LeaseBatches#giveUp} (the takes and give-ups that threads ask for at the same moment go together); queries
 * and {@code forceRelease} to {@link LeaseAdministration}; renewals and expiry to the {@link RenewalWatchdog}, which
 * checks the server's clock with the {@link ClockCheck}. The statements themselves are in {@link LeaseStatements}.
 */
public final class LeaseEngine implements LockEngine, GrantingEngine<Lease> {

    private static final Logger LOG = Logger.getLogger(LeaseEngine.class);

    private final ConnectionSource connections;
    private final LossNotifier notifier;
    private final LeaseRegistry leases;
    private final LeaseStatements statements;
    private final LeaseAdministration administration;
    /** Group commit of the takes and give-ups asked for at the same moment. */
    private final LeaseBatches batches;
    private final TakeLoop takes;
    private final ClockCheck clock;
    private final RenewalWatchdog watchdog;
    private volatile boolean closed;
    private final String tableName;
    /** This instance's membership of its fleet: leases are taken only while it is confirmed. */
    private final Membership membership;
    /** What this instance saw of the leases others hold, and its own that ended here. */
    private final Observations observations = new Observations();

    public LeaseEngine(ConnectionSource connections, LockTable table, String identity, LockTimings timings,
            LockMetrics metrics, Membership membership) {
        this.notifier = new LossNotifier(metrics, LockMode.LEASE);
        this.leases = new LeaseRegistry(notifier, timings, observations);
        this.membership = membership;
        membership.listen(new Membership.Listener() {
            @Override
            public void lapsed() {
                leases.loseAll(membership.lapseMessage());
            }

            @Override
            public void out(String why) {
                leases.loseAll(why);
            }
        });
        this.connections = connections;
        this.tableName = table.name();
        this.statements = new LeaseStatements(connections, table, timings.maxClockSkewMicros());
        this.administration = new LeaseAdministration(connections, table);
        this.batches = new LeaseBatches(connections, statements, observations);
        this.takes = new TakeLoop(connections, statements, batches, membership, observations, identity, timings.ttlNanos());
        this.clock = new ClockCheck(connections, new ServerClock(table), timings.maxClockSkew().toNanos());
        this.watchdog = new RenewalWatchdog(connections, statements, leases, membership, clock, metrics, timings);
        // on a borrower thread: a give-back stuck on a stalled network must not hold a thread of the watchdog
        watchdog.alsoEvery(LeaseBatches.IDLE_NANOS / 2, "give-back of the connection kept for batches",
                () -> connections.executor().execute(batches::giveBackIdleConnection));
    }

    /** {@link LeaseStatements#takeStatement}, for the benchmarks' floor, which sends it raw. */
    public static String takeStatement(String table) {
        return LeaseStatements.takeStatement(table);
    }

    /** {@link LeaseStatements#giveUpStatement}, for the benchmarks' floor, which sends it raw. */
    public static String giveUpStatement(String table) {
        return LeaseStatements.giveUpStatement(table);
    }

    @Override
    public LockMode mode() {
        return LockMode.LEASE;
    }

    // --- acquire ---

    @Override
    public ControlledHandle acquire(LockRequest request) {
        ensureOpen();
        if (request.atMostForNanos() > 0 && request.atMostForNanos() <= leases.shortestUsefulNanos()) {
            // a lease that short counts as lost as soon as it is taken: refused, as an extension to it is
            throw new IllegalArgumentException("Lock '" + request.name() + "' cannot be held at most "
                    + TimeUnit.NANOSECONDS.toMillis(request.atMostForNanos()) + " ms: its holder counts a lease lost "
                    + TimeUnit.NANOSECONDS.toMillis(leases.shortestUsefulNanos()) + " ms before its end (the loss"
                    + " margin, a tenth of quarkus.mysql-lock.lease.ttl, at most 250 ms), so it would be lost at once."
                    + " Give it longer");
        }
        long start = System.nanoTime();
        long deadline = start + request.waitNanos();
        return membership.granting(request.name(), request.waitNanos(),
                () -> acquireConfirmed(request.name(), request.serverName(), start, deadline, request.throwIfBusy(),
                        request.ownerThread(), request.atMostForNanos()));
    }

    /** {@code leaseCapNanos}: a lease of this length that is not renewed; 0 for the ttl, renewed while held. */
    private ControlledHandle acquireConfirmed(String name, String serverName, long start, long deadline,
            boolean throwIfBusy, Thread me, long leaseCapNanos) {
        Lease mine = leases.get(serverName);
        if (mine != null && mine.ownedBy(me)) {
            synchronized (mine) {
                if (mine.isHeld() && mine.holds > 0) {
                    mine.holds++;
                    return new HoldHandle<>(mine, this, me);
                }
            }
        }
        LocalGate gate = leases.enterGate(serverName);
        boolean passed = false;
        Lease lease = null;
        try {
            passed = gate.pass(deadline - System.nanoTime());
            if (!passed) {
                return TakeLoop.busy(name, serverName, start, throwIfBusy, leases.describeLocal(serverName));
            }
            lease = takes.take(name, serverName, gate, start, deadline, throwIfBusy, leaseCapNanos);
            if (lease == null) {
                return null;
            }
            leases.put(serverName, lease);
            // Read after the lease is visible: a lapse reported later finds it (and reports it lost).
            if (closed) {
                undoTake(lease);
                throw new IllegalStateException("The lock manager is shut down");
            }
            if (!membership.grantable(System.nanoTime())) {
                // The membership lapsed while the lease was taken: the fleet may have moved to named locks.
                undoTake(lease);
                throw new Membership.Unconfirmed();
            }
            return new HoldHandle<>(lease, this, me);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Refusals.callerInterrupted(name, Duration.ofNanos(System.nanoTime() - start), e);
        } finally {
            if (lease == null) {
                if (passed) {
                    gate.open();
                }
                leases.leaveGate(serverName, gate);
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
        leases.remove(lease);
        try {
            if (lease.lost != null) {
                if (lease.lost.reason() != LockLostException.Reason.NOT_HELD) {
                    // Given up locally before its end on the server (a renewal may still have extended it): only
                    // this acquisition's owner token matches, so another holder's lease is never touched.
                    settle(lease, batches.giveUp(lease));
                } else {
                    observations.settled(lease.serverName, lease.ownerTokens());
                }
            } else {
                long now = System.nanoTime();
                if (membership.lapsed(now)) {
                    notifier.loseAtRelease(lease, LockLostException.Reason.MEMBERSHIP_LOST, "Lease '" + lease.name
                            + "' was lost before it was released: " + membership.lapseMessage(), null);
                }
                if (leases.overdue(lease, now)) {
                    notifier.loseAtRelease(lease, LockLostException.Reason.LEASE_EXPIRED, "Lease '" + lease.name
                            + "' was lost before it was released: it was not renewed in time and may have expired", null);
                }
                int released = batches.giveUp(lease);
                settle(lease, released);
                if (released == 0) {
                    notifier.loseAtRelease(lease, LockLostException.Reason.NOT_HELD, "Lease '" + lease.name
                            + "' was lost before it was released: another instance had taken it over, or ended it", null);
                }
            }
        } finally {
            leases.openGate(lease);
        }
    }

    @Override
    public void abandon(Lease lease, String message) {
        leases.lose(lease, LockLostException.Reason.CANCELLED, message, null);
        release(lease);
    }

    /**
     * What a give-up answered (1 given up, 0 not ours, -1 unknown), for this instance's next take of the name: a row
     * perhaps still ours is taken over at once (its holder was told, or it is this release), without waiting as for
     * another instance's.
     */
    private void settle(Lease lease, int released) {
        if (released < 0) {
            observations.ended(lease.serverName, lease.ownerTokens());
        } else {
            observations.settled(lease.serverName, lease.ownerTokens());
        }
    }

    /** Gives back a lease taken but never handed out, telling no one. */
    private void undoTake(Lease lease) {
        synchronized (lease) {
            lease.released = true;
        }
        leases.remove(lease);
        try {
            settle(lease, batches.giveUp(lease));
        } finally {
            leases.openGate(lease);
        }
    }

    @Override
    public boolean extend(Lease lease, long atMostForNanos) {
        return lease.renewable || watchdog.extend(lease, atMostForNanos);
    }

    @Override
    public long fencingToken(Lease lease) {
        return lease.fence;
    }

    @Override
    public boolean isValid(Lease lease) {
        if (lease.lost == null && leases.overdue(lease, System.nanoTime())) {
            leases.expire(lease);
        }
        return lease.lost == null;
    }

    // --- queries ---

    @Override
    public boolean isLocked(LockName lock) {
        return inspect(lock).isPresent();
    }

    @Override
    public Optional<LockInfo> inspect(LockName lock) {
        String name = lock.name();
        String serverName = lock.serverName();
        Lease mine = leases.get(serverName);
        if (mine != null && mine.isHeld()) {
            return Optional.of(info(mine));
        }
        ensureOpen();
        return administration.inspect(name, serverName);
    }

    @Override
    public List<LockInfo> holders() {
        ensureOpen();
        return administration.holders(row -> {
            Lease mine = leases.get(row.name());
            boolean ours = mine != null && mine.isHeld() && mine.ownerToken().equals(row.holder());
            return ours ? new LockInfo(row.name(), LeaseRegistry.describe(mine), mine.since, row.fencingToken(),
                    LockMode.LEASE) : row;
        });
    }

    @Override
    public boolean forceRelease(LockName lock) {
        String name = lock.name();
        String serverName = lock.serverName();
        ensureOpen();
        Optional<String> ended = administration.forceRelease(name, serverName);
        if (ended.isEmpty()) {
            return false;
        }
        // only the lease it ended: this instance may have taken the name again since (its election's campaign)
        Lease mine = leases.get(serverName);
        boolean ours = mine != null && mine.ownerTokens().contains(ended.get());
        if (ours && mine.isHeld()) {
            leases.lose(mine, LockLostException.Reason.NOT_HELD, "Lease '" + name + "' was force-released", null);
        }
        LOG.warnf("Lease '%s' was force-released%s", name, ours ? " (this instance held it)" : "");
        return true;
    }

    @Override
    public List<LockInfo> held() {
        List<LockInfo> infos = new ArrayList<>();
        for (Lease lease : leases.all()) {
            if (lease.isHeld()) {
                infos.add(info(lease));
            }
        }
        return infos;
    }

    private LockInfo info(Lease lease) {
        return new LockInfo(lease.name, LeaseRegistry.describe(lease), lease.since, lease.fence, LockMode.LEASE);
    }

    /** The lock table, as statements name it. */
    public String tableName() {
        return tableName;
    }

    @Override
    public PeriodicWork periodicWork() {
        return watchdog.work();
    }

    @Override
    public EngineHealth health() {
        return clock.health(leases::size);
    }

    /** In-JVM gates in use: a measure of leaks for tests. */
    public int gatesInUse() {
        return leases.gatesInUse();
    }

    /** The most leases of others an instance watches at once for observed expiry; beyond, it forgets the oldest. */
    public static final int WATCHED_LEASES_BOUND = Observations.CAPACITY;

    /** How many leases of others this instance watches now ({@link Observations}): a measure of the bound for tests. */
    public int watchedLeases() {
        return observations.watched();
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
        for (Lease lease : List.copyOf(leases.all())) {
            if (!lease.isHeld()) {
                continue;
            }
            notifier.lose(lease, LockLostException.Reason.SHUTDOWN,
                    "Lease '" + lease.name + "' was released because the application is shutting down", null);
            statements.giveUp(lease);
            leases.remove(lease);
            leases.openGate(lease);
        }
        batches.close();
        membership.leave();
        notifier.close();
        connections.close();
    }
}
