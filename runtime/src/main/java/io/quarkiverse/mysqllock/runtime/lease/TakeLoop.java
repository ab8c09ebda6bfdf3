package io.quarkiverse.mysqllock.runtime.lease;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
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

/**
 * The take loop: for the thread that passed a name's in-JVM gate, tries to take the lease on the server until its
 * deadline, with jittered backoff, and only while this instance's membership of its fleet is confirmed. It seeds the
 * name's row once, and replaces dead or read-only pooled connections.
 */
final class TakeLoop {

    private static final Logger LOG = Logger.getLogger(LeaseEngine.class);
    private static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final int MAX_STALE_CONNECTIONS = ConnectionSource.MAX_STALE_CONNECTIONS;
    /** How many takes finding nothing to take, at most, before the row is looked for again. */
    private static final int SEED_CHECK_EVERY = 4;
    /** How often an acquisition whose wait is over looks again at a row that was only locked. */
    private static final int ROW_LOCK_RETRIES = 3;

    private final ConnectionSource connections;
    private final LeaseStatements statements;
    private final LeaseBatches batches;
    private final Membership membership;
    private final String identity;
    private final long ttlNanos;
    private final long maxBackoffNanos;

    TakeLoop(ConnectionSource connections, LeaseStatements statements, LeaseBatches batches, Membership membership,
            String identity, long ttlNanos) {
        this.connections = connections;
        this.statements = statements;
        this.batches = batches;
        this.membership = membership;
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
        String ownerToken = identity + "#" + token();
        boolean triedTogether = false;
        attempts: for (int attempt = 1;; attempt++) {
            // Confirmed before a connection is borrowed: a renewal of the membership needs one of its own, and
            // acquisitions holding every connection of the pool while they wait for it would starve it.
            membership.confirmBeforeGrant(name, connections.budgetNanos(deadline - System.nanoTime()));
            // The first try goes with those other threads make now (one statement for them all); a name found held by
            // another then starts with the backoff, as after a first busy answer.
            boolean foundBusy = false;
            boolean foundNotFree = false;
            if (!triedTogether) {
                triedTogether = true;
                LeaseBatches.TakeAnswer together = batches.take(new LeaseStatements.TakeRequest(serverName, ownerToken,
                        TimeUnit.NANOSECONDS.toMicros(leaseNanos)), deadline);
                if (together.kind() == LeaseBatches.TakeAnswer.Kind.TAKEN) {
                    return new Lease(name, serverName, Instant.now(), ownerToken, together.fence(), gate,
                            leaseCapNanos == 0, together.sentAtNanos() + leaseNanos);
                }
                foundBusy = together.kind() == LeaseBatches.TakeAnswer.Kind.BUSY;
                foundNotFree = together.kind() == LeaseBatches.TakeAnswer.Kind.NOT_FREE;
                if (foundBusy && deadline - System.nanoTime() <= 0) {
                    // busy, and no wait: answered without a connection of its own
                    busy(name, serverName, start, throwIfBusy, together.holder());
                    return null;
                }
                // A token handed to a batch that failed may still be written by its give-up of the batch's takes,
                // late: the takes of this loop use a token of their own.
                ownerToken = identity + "#" + token();
            }
            ConnectionSource.Borrowed borrowed = null;
            try {
                borrowed = connections.borrowForStatements(name, deadline - System.nanoTime());
                Connection raw = borrowed.raw();
                boolean seeded = false;
                // takes that found nothing to take since the row was last seen: it may have been purged since
                int takesSinceSeen = 0;
                boolean rowLocked = false;
                int rowLockRetries = 0;
                long backoff = FIRST_BACKOFF_NANOS;
                ServerVersion server = connections.server(raw);
                while (true) {
                    if (!membership.grantable(System.nanoTime())) {
                        attempt--; // not a dead connection: confirm again with this one given back
                        continue attempts;
                    }
                    long sentAt = System.nanoTime();
                    long fence = 0;
                    if (foundBusy || foundNotFree) {
                        // the first take found it held (the row exists if a batch read it back): no second look
                        // before the seeding check or the backoff
                        seeded = foundBusy;
                        foundBusy = false;
                        foundNotFree = false;
                    } else {
                        try {
                            fence = statements.take(raw, server, serverName, ownerToken, leaseNanos);
                        } catch (SQLException e) {
                            if (!SqlErrors.isLockWaitTimeout(e)) {
                                throw e;
                            }
                            // A transaction holds the row (acquireForTransaction, a locking read of the fence), or the
                            // next one, which a take of a name without a row also locks (a renewal of other leases, for
                            // a moment): busy for now; the row may still be missing.
                            rowLocked = true;
                        }
                    }
                    if (fence > 0) {
                        return new Lease(name, serverName, Instant.now(), ownerToken, fence, gate, leaseCapNanos == 0,
                                sentAt + leaseNanos);
                    }
                    long remaining = deadline - System.nanoTime();
                    // A row seen once may be gone since (purgeUnused removes a row unused for long, free at that
                    // moment): looked for again every few takes, and before a busy answer.
                    if (seeded && (++takesSinceSeen >= SEED_CHECK_EVERY || remaining <= 0 && takesSinceSeen > 1)) {
                        seeded = false;
                    }
                    if (!seeded) {
                        Optional<Boolean> created = statements.seedWithoutRowWaits(raw, server, serverName);
                        seeded = created.isPresent();
                        takesSinceSeen = 0;
                        rowLocked |= created.isEmpty();
                        if (created.orElse(false)) {
                            continue;
                        }
                    }
                    if (remaining <= 0 && rowLocked && rowLockRetries < ROW_LOCK_RETRIES) {
                        // A row or gap locked for the moment of another statement (a renewal of other leases) is no
                        // reason to answer busy: look again, a few milliseconds later.
                        rowLockRetries++;
                        rowLocked = false;
                        TimeUnit.MILLISECONDS.sleep(5);
                        continue;
                    }
                    if (remaining <= 0) {
                        String holder = throwIfBusy ? statements.holder(raw, serverName) : null;
                        // with no lease on it, what kept it busy is a transaction holding its row
                        Refusals.busy(name, start, throwIfBusy, holder, rowLocked ? "no lease, but a transaction holding"
                                + " its row in the lock table (acquireForTransaction, purgeUnused)" : "another instance");
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
     * 52 random bits in 13 hex digits: with the instance's identity, unique to this acquisition (a batched give-up and a
     * renewal match a row on its name and its token). Not a UUID: its SecureRandom reads the kernel's entropy device
     * under a lock, a system call every other acquisition.
     */
    private static String token() {
        return Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xF_FFFF_FFFF_FFFFL | 0x10_0000_0000_0000L)
                .substring(1);
    }

    /** Null if {@code throwIfBusy} is false; else throws that the lock is busy. */
    static ControlledHandle busy(String name, String serverName, long start, boolean throwIfBusy, String holder) {
        return Refusals.busy(name, start, throwIfBusy, holder, "another instance");
    }
}
