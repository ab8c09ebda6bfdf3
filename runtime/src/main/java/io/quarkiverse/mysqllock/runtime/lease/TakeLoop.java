package io.quarkiverse.mysqllock.runtime.lease;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LocalGate;
import io.quarkiverse.mysqllock.runtime.engine.Refusals;
import io.quarkiverse.mysqllock.runtime.fleet.Membership;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements;
import io.quarkiverse.mysqllock.runtime.table.OwnerTokens;

/**
 * The take loop: for the thread that passed a name's in-JVM gate, tries to take the lease on the server until its
 * deadline, with jittered backoff, and only while this instance's membership of its fleet is confirmed. After a first
 * take, it reads the row at each step ({@link Observations}: a lease another instance holds is taken over only once it
 * was seen unchanged for a whole lease) and takes it when that read shows it may; it seeds the row when it is missing,
 * and replaces dead or read-only pooled connections.
 */
final class TakeLoop {

    private static final Logger LOG = Logger.getLogger(LeaseEngine.class);
    private static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;
    /** Takes tried at once, at most, after reads showed the row takeable (a row lock, another taker first). */
    private static final int QUICK_TAKES = 2;
    /** How often an acquisition whose wait is over looks again at a row that was only locked. */
    private static final int ROW_LOCK_RETRIES = 3;

    private final ConnectionSource connections;
    private final LeaseStatements statements;
    private final LeaseBatches batches;
    private final Membership membership;
    private final Observations observations;
    private final String identity;
    private final long ttlNanos;
    private final long maxBackoffNanos;

    TakeLoop(ConnectionSource connections, LeaseStatements statements, LeaseBatches batches, Membership membership,
            Observations observations, String identity, long ttlNanos) {
        this.connections = connections;
        this.statements = statements;
        this.batches = batches;
        this.membership = membership;
        this.observations = observations;
        this.identity = identity;
        this.ttlNanos = ttlNanos;
        this.maxBackoffNanos = Math.min(MAX_BACKOFF_NANOS, ttlNanos / 4);
    }

    /**
     * The lease taken, or null if it stayed busy until the deadline and {@code throwIfBusy} is false.
     *
     * @throws LockNotAcquiredException if busy and {@code throwIfBusy}, and for every other failure
     */
    Lease take(String name, String serverName, LocalGate gate, long start, long deadline, boolean throwIfBusy,
            long leaseCapNanos) throws InterruptedException {
        long leaseNanos = leaseCapNanos > 0 ? leaseCapNanos : ttlNanos;
        long leaseMicros = TimeUnit.NANOSECONDS.toMicros(leaseNanos);
        String ownerToken = newToken(leaseMicros);
        boolean triedTogether = false;
        attempts: for (int attempt = 1;; attempt++) {
            // Confirmed before a connection is borrowed: a renewal of the membership needs one of its own, and
            // acquisitions holding every connection of the pool while they wait for it would starve it.
            membership.confirmBeforeGrant(name, connections.budgetNanos(deadline - System.nanoTime()));
            // Whether the next step takes (else it reads the row first), or pauses first (the batch found the name held
            // by another: no second look before the backoff); who holds it, as last read.
            boolean takeNow = true;
            boolean pauseFirst = false;
            String holder = null;
            if (!triedTogether && observations.expected(serverName, System.nanoTime()) != null) {
                // An owned row this instance may replace (watched long enough, or its own): a take of its own, which
                // says so (a batch takes only free or long-dead rows).
                triedTogether = true;
            }
            if (!triedTogether) {
                // The first try goes with those other threads make now (one statement for them all).
                triedTogether = true;
                LeaseBatches.TakeAnswer together = batches.take(new LeaseStatements.TakeRequest(serverName, ownerToken,
                        leaseMicros), deadline);
                if (together.kind() == LeaseBatches.TakeAnswer.Kind.TAKEN) {
                    observations.taken(serverName);
                    return new Lease(name, serverName, Instant.now(), ownerToken, together.fence(), gate,
                            leaseCapNanos == 0, together.sentAtNanos() + leaseNanos);
                }
                if (together.kind() == LeaseBatches.TakeAnswer.Kind.BUSY) {
                    observations.saw(serverName, together.holder(), together.expiresMicros(),
                            together.answeredAtNanos());
                    if (deadline - System.nanoTime() <= 0 && !takeable(serverName, null, together.answeredAtNanos())) {
                        // busy, and no wait: answered without a connection of its own
                        busy(name, serverName, start, throwIfBusy, together.holder());
                        return null;
                    }
                }
                takeNow = together.kind() == LeaseBatches.TakeAnswer.Kind.ALONE;
                pauseFirst = together.kind() == LeaseBatches.TakeAnswer.Kind.BUSY
                        && !takeable(serverName, null, together.answeredAtNanos());
                holder = together.holder();
                // A token handed to a batch that failed may still be written by its give-up of the batch's takes,
                // late: the takes of this loop use a token of their own.
                ownerToken = newToken(leaseMicros);
            }
            ConnectionSource.Borrowed borrowed = null;
            try {
                borrowed = connections.borrowForStatements(name, deadline - System.nanoTime());
                Connection raw = borrowed.raw();
                boolean rowLocked = false;
                int rowLockRetries = 0;
                // takes tried at once after a read showed the row takeable, since the last pause
                int quickTakes = 0;
                long backoff = FIRST_BACKOFF_NANOS;
                ServerVersion server = connections.server(raw);
                while (true) {
                    if (!membership.grantable(System.nanoTime())) {
                        attempt--; // not a dead connection: confirm again with this one given back
                        continue attempts;
                    }
                    if (pauseFirst) {
                        pauseFirst = false;
                    } else {
                        if (takeNow) {
                            long sentAt = System.nanoTime();
                            long fence = 0;
                            try {
                                fence = statements.take(raw, server, serverName, ownerToken, leaseNanos,
                                        observations.expected(serverName, sentAt));
                            } catch (SQLException e) {
                                if (!SqlErrors.isLockWaitTimeout(e)) {
                                    // It may have committed unanswered: no one here counts on that token, so the row
                                    // may be taken again at once by this instance, under a new one.
                                    observations.ended(serverName, List.of(ownerToken));
                                    ownerToken = newToken(leaseMicros);
                                    throw e;
                                }
                                // A transaction holds the row (acquireForTransaction, a locking read of the fence), or the
                                // next one, which a take of a name without a row also locks (a renewal of other leases, for
                                // a moment): busy for now; the row may still be missing.
                                rowLocked = true;
                            }
                            if (fence > 0) {
                                observations.taken(serverName);
                                return new Lease(name, serverName, Instant.now(), ownerToken, fence, gate,
                                        leaseCapNanos == 0, sentAt + leaseNanos);
                            }
                        }
                        // What holds it: a consistent read, locking nothing, which also finds a row removed since
                        // (purgeUnused removes a row unused for long, free at that moment).
                        LeaseStatements.RowVersion row = statements.version(raw, serverName);
                        long answeredAt = System.nanoTime();
                        takeNow = false;
                        if (row == null) {
                            holder = null;
                            Optional<Boolean> created = statements.seedWithoutRowWaits(raw, server, serverName);
                            rowLocked |= created.isEmpty();
                            if (created.isPresent() && quickTakes++ < QUICK_TAKES) {
                                takeNow = true;
                                continue;
                            }
                        } else {
                            holder = row.owner();
                            observations.saw(serverName, row.owner(), row.expiresMicros(), answeredAt);
                            if (takeable(serverName, row, answeredAt) && quickTakes++ < QUICK_TAKES) {
                                takeNow = true;
                                continue;
                            }
                        }
                    }
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0 && rowLocked && rowLockRetries < ROW_LOCK_RETRIES) {
                        // A row or gap locked for the moment of another statement (a renewal of other leases) is no
                        // reason to answer busy: look again, a few milliseconds later.
                        rowLockRetries++;
                        rowLocked = false;
                        quickTakes = 0;
                        takeNow = true;
                        TimeUnit.MILLISECONDS.sleep(5);
                        continue;
                    }
                    if (remaining <= 0) {
                        // with no lease on it, what kept it busy is a transaction holding its row
                        Refusals.busy(name, start, throwIfBusy, throwIfBusy ? holder : null,
                                rowLocked ? "no lease, but a transaction holding"
                                        + " its row in the lock table (acquireForTransaction, purgeUnused)"
                                        : "another instance");
                        return null;
                    }
                    // Full jitter: waiters of several instances spread out instead of polling in step; and no later
                    // than the moment the version seen may be taken over.
                    long pause = Math.min(remaining, ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1));
                    long ripeIn = observations.ripeInNanos(serverName, System.nanoTime());
                    if (ripeIn > 0) {
                        pause = Math.min(pause, ripeIn);
                    }
                    TimeUnit.NANOSECONDS.sleep(pause);
                    backoff = Math.min(backoff * 2, maxBackoffNanos);
                    quickTakes = 0;
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
     * Whether a take may succeed now: the row (null: as the batch read it) is free or long dead, or a take may replace
     * the version seen ({@link Observations#expected}; an older holder's lease once expired by this server's clock).
     */
    private boolean takeable(String serverName, LeaseStatements.RowVersion row, long now) {
        if (row != null && row.free()) {
            return true;
        }
        LeaseStatements.Expected expected = observations.expected(serverName, now);
        return expected != null && (expected.kind() != LeaseStatements.Expected.Kind.LEGACY
                || row != null && row.expiredHere());
    }

    /** A new acquisition's owner token: this instance, a random part, the lease's length. */
    private String newToken(long leaseMicros) {
        return OwnerTokens.fresh(identity, leaseMicros);
    }

    /** Null if {@code throwIfBusy} is false; else throws that the lock is busy. */
    static ControlledHandle busy(String name, String serverName, long start, boolean throwIfBusy, String holder) {
        return Refusals.busy(name, start, throwIfBusy, holder, "another instance");
    }
}
