package io.quarkiverse.mysqllock.runtime.fleet;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.engine.LockTimings;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.jdbc.Statements;
import io.quarkiverse.mysqllock.runtime.table.FleetRows;
import io.quarkiverse.mysqllock.runtime.table.FleetRows.Member;

/**
 * The engine of a fleet, kept in the lock table so that every instance of the fleet uses the same one: a named lock and
 * a lease on the same name never exclude each other.
 * <p>
 * Two kinds of reserved rows, whose names start with {@code ~} (no lock name does): the record {@code ~engine} (with the
 * namespace: {@code ~engine:<namespace>}), whose {@code owner} says which engine the fleet uses, who chose it and why,
 * and whose {@code fence} counts the changes; and one membership row per running instance, {@code ~live~<hex>}, a lease
 * its engine renews ({@link Membership}), whose {@code owner} starts with the instance's engine.
 * <p>
 * The record binds while the fleet runs: while a member of its engine is alive, or a lease of the LEASE engine has not
 * expired. An instance with {@code mode=auto} then uses the recorded engine, whatever its own probes say; one with an
 * explicit other mode is refused; one that cannot use the recorded engine at all (NAMED on a Galera node, a read-only
 * server, an auto-reconnect URL) is refused. When nothing of the fleet runs, the next instance to start records its
 * own choice: that is also how a fleet changes engine, deliberately, by being stopped and started with the new mode.
 * <p>
 * Every decision and registration happens in one transaction that holds the record's row lock, so two instances
 * starting at once decide one after the other. It never locks a live member's row: renewals go on whatever a starting
 * instance does (or a paused one in the middle of its decision). A membership renews only while it has not expired, so
 * an expired one comes back only through a new decision, which waits for this one; a row that looks expired is read
 * again with a lock before it counts as dead. Its row locks are waited for one second at most, so a decision left
 * behind on the server by a client that gave up never holds the record for long.
 */
public final class EngineAgreement {

    private static final int OWNER_LENGTH = 255;
    private static final Logger LOG = Logger.getLogger(EngineAgreement.class);
    /** How long the server waits for the next statement of a decision before it ends the session (wait_timeout). */
    static final long DECIDING_IDLE_SECONDS = 5;

    private final String table;
    /** The statements on the record and the membership rows. */
    private final FleetRows rows;
    private final String identity;
    /** This instance's leader window, recorded in its membership row, negative for instant hand-over ({@link FleetRows}). */
    private final long leaderWindowMicros;

    /**
     * @param table the lock table's name
     * @param namespace {@code quarkus.mysql-lock.namespace}, or null: fleets of different namespaces agree separately
     * @param timings its {@link LockTimings#leaderWindow()}: how long after its session ended a NAMED leader of this
     *        instance may still say it leads, recorded in its membership, so that the fleet's new terms wait for the
     *        largest; and {@code lease.max-clock-skew}: a membership row is taken over for a new member only once it is
     *        free or long dead (a server clock ahead must not end a live member's membership)
     * @param instantHandOver {@code named.instant-leader-hand-over}: recorded too, for it holds only while every live
     *        member has it
     */
    public EngineAgreement(String table, String namespace, String identity, LockTimings timings,
            boolean instantHandOver) {
        this.table = table;
        this.identity = identity;
        this.rows = new FleetRows(table, namespace, timings.maxClockSkewMicros());
        long window = TimeUnit.NANOSECONDS.toMicros(timings.leaderWindow().toNanos());
        this.leaderWindowMicros = instantHandOver ? -window : window;
    }

    /**
     * What this instance would choose on its own.
     *
     * @param explicit {@code quarkus.mysql-lock.mode} named the engine (not {@code auto})
     * @param namedImpossible why this instance cannot hold named locks at all, if it cannot
     */
    public record Proposal(LockMode mode, String reason, boolean explicit, Optional<String> namedImpossible) {
    }

    /**
     * The engine the fleet agreed on, why, and this instance's membership row: null on a read-only server, where this
     * instance can read the fleet's record but not join it.
     */
    public record Decision(LockMode mode, String reason, String memberName, String memberOwner) {
    }

    /**
     * This instance may not join the fleet with its configuration.
     *
     * @param retryAfterNanos when the members of the other engine will all have expired unless they renew, if they may
     *        be dead; 0 when waiting cannot help
     * @param latestExpiryMicros the latest end of those memberships (server time): a later one means one was renewed
     */
    public record Refusal(String message, long retryAfterNanos, long latestExpiryMicros) {
    }

    /** The outcome: a decision, or a refusal. */
    public record Outcome(Decision decision, Refusal refusal) {
    }

    /**
     * Decides, in one transaction on this connection (autocommit on; it is left on), and registers this instance as a
     * member with a membership lasting {@code memberTtlNanos}.
     */
    public Outcome agree(Connection raw, Proposal proposal, long memberTtlNanos) throws SQLException {
        // Another instance's decision may hold the record: two deciding at once (a deadlock), or one paused in the
        // middle of its decision, whose transaction the server ends after DECIDING_IDLE_SECONDS.
        long giveUpAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(DECIDING_IDLE_SECONDS + 2);
        while (true) {
            try {
                return agreeOnce(raw, proposal, memberTtlNanos);
            } catch (SQLException e) {
                if (!(SqlErrors.isDeadlock(e) || SqlErrors.isLockWaitTimeout(e)) || System.nanoTime() - giveUpAt > 0) {
                    throw e;
                }
                LOG.debugf("The fleet's record is busy (%s): deciding again", SqlErrors.describe(e));
            }
        }
    }

    /** As {@link #agree}, in one attempt: fails at once when another decision holds the record for a second. */
    public Outcome agreeOnce(Connection raw, Proposal proposal, long memberTtlNanos) throws SQLException {
        try {
            return inTransaction(raw, proposal, memberTtlNanos, true);
        } catch (SQLException e) {
            if (!SqlErrors.isReadOnly(e)) {
                throw e;
            }
            // A replica, or a demoted primary: the fleet's record can be read, not joined.
            return inTransaction(raw, proposal, memberTtlNanos, false);
        }
    }

    /**
     * The decision's transaction: row locks are waited for 1 s, and the server ends the session if this instance stops
     * answering in the middle of it for {@link #DECIDING_IDLE_SECONDS} (paused), so its locks on the record and on
     * expired members' rows never stall the rest of the fleet for longer.
     */
    private Outcome inTransaction(Connection raw, Proposal proposal, long memberTtlNanos, boolean join)
            throws SQLException {
        Map<String, Long> settings = Map.of("innodb_lock_wait_timeout", 1L, "wait_timeout", DECIDING_IDLE_SECONDS);
        return Statements.withSessionSettings(raw, settings, () -> {
            raw.setAutoCommit(false);
            boolean committed = false;
            try {
                Outcome outcome = decide(raw, proposal, memberTtlNanos, join);
                if (outcome.decision() != null && join) {
                    raw.commit();
                    committed = true;
                }
                return outcome;
            } finally {
                if (!committed) {
                    raw.rollback();
                }
                raw.setAutoCommit(true);
            }
        });
    }

    private Outcome decide(Connection raw, Proposal proposal, long memberTtlNanos, boolean join) throws SQLException {
        String recorded = join ? rows.lockRecord(raw) : rows.readRecord(raw);
        LockMode recordedMode = FleetRows.modeOf(recorded);
        List<Member> members = join ? rows.confirmExpired(raw, rows.members(raw)) : rows.members(raw);
        List<Member> alive = members.stream().filter(m -> m.remainingMicros() > 0).toList();
        long unexpiredLeases = recordedMode == LockMode.LEASE ? rows.unexpiredLeases(raw) : 0;

        // The fleet runs with the engines its live members use (normally one), or with LEASE while a lease lasts.
        List<Member> otherEngine = alive.stream().filter(m -> m.mode() != proposal.mode()).toList();
        boolean fleetRuns = !alive.isEmpty() || unexpiredLeases > 0;
        LockMode fleetMode = !alive.isEmpty() ? alive.get(0).mode() : unexpiredLeases > 0 ? LockMode.LEASE : null;

        LockMode agreed;
        String reason;
        if (!fleetRuns) {
            agreed = proposal.mode();
            reason = proposal.reason();
            // A new fleet: its first instance records its choice, and why, even if the former fleet's was the same.
            if (join) {
                String owner = truncate(agreed + " chosen by " + identity + ": " + proposal.reason());
                rows.writeRecord(raw, owner);
                if (recordedMode != null && recordedMode != agreed) {
                    reason = reason + " (no instance of the fleet's former engine, " + recordedMode
                            + ", is running: this instance records its own choice)";
                }
            }
        } else if (proposal.explicit() ? !otherEngine.isEmpty() || (fleetMode != proposal.mode())
                : fleetMode == LockMode.NAMED && proposal.namedImpossible().isPresent()) {
            return new Outcome(null, refusal(proposal, fleetMode, recorded, alive, unexpiredLeases));
        } else {
            agreed = fleetMode;
            reason = "the fleet on lock table '" + table + "' uses it: " + describe(recorded) + "; " + alive.size()
                    + " instance(s) of it running";
            if (proposal.mode() != agreed) {
                reason = reason + ". This instance's own detection says " + proposal.mode() + " (" + proposal.reason()
                        + "): to move the fleet to " + proposal.mode() + ", stop every instance, then start them with"
                        + " quarkus.mysql-lock.mode=" + proposal.mode().name().toLowerCase(Locale.ROOT);
            }
        }
        if (!join) {
            return new Outcome(new Decision(agreed, reason + "; the server is read-only (a replica, or a primary"
                    + " demoted by a failover): this instance takes no lock until it reaches a writable server", null,
                    null), null);
        }
        String memberOwner = truncate(agreed + FleetRows.MODE_PREFIX_SEPARATOR + identity + "#"
                + UUID.randomUUID().toString().substring(0, 8));
        String memberName = rows.register(raw, members, memberOwner, memberTtlNanos, leaderWindowMicros);
        return new Outcome(new Decision(agreed, reason, memberName, memberOwner), null);
    }

    private Refusal refusal(Proposal proposal, LockMode fleetMode, String recorded, List<Member> alive,
            long unexpiredLeases) {
        StringBuilder message = new StringBuilder("This instance cannot join the fleet on lock table '").append(table)
                .append("': the fleet uses the ").append(fleetMode).append(" engine (").append(describe(recorded))
                .append("), and ");
        if (!proposal.explicit()) {
            message.append("this instance cannot hold named locks: ").append(proposal.namedImpossible().orElseThrow())
                    .append(". Fix this instance's datasource, or move the whole fleet to LEASE: stop every instance,"
                            + " then start them with quarkus.mysql-lock.mode=lease");
            return new Refusal(message.toString(), 0, 0);
        }
        message.append("this instance is configured with quarkus.mysql-lock.mode=")
                .append(proposal.mode().name().toLowerCase(Locale.ROOT))
                .append(". A named lock and a lease never exclude each other, so one fleet uses one engine. ");
        if (!alive.isEmpty()) {
            message.append(alive.size()).append(" instance(s) of the ").append(fleetMode).append(" engine still run: ");
            for (int i = 0; i < Math.min(5, alive.size()); i++) {
                message.append(i == 0 ? "" : ", ").append(alive.get(i).identity());
            }
            message.append(alive.size() > 5 ? ", ..." : "").append(". ");
        }
        if (unexpiredLeases > 0) {
            message.append(unexpiredLeases).append(" lease(s) have not expired yet. ");
        }
        message.append("To move the fleet to ").append(proposal.mode()).append(", stop every instance of the ")
                .append(fleetMode).append(" engine first (a killed one counts until its membership expires,")
                .append(" the longer of quarkus.mysql-lock.lease.ttl and 3 x quarkus.mysql-lock.named.keepalive-interval);")
                .append(" or remove quarkus.mysql-lock.mode to follow the fleet");
        long retryAfter = alive.stream().mapToLong(Member::remainingMicros).max().orElse(0);
        long latestExpiry = alive.stream().mapToLong(Member::expiresMicros).max().orElse(0);
        // Leases are not waited for: one capped by atMostFor may last far longer than a membership.
        return new Refusal(message.toString(), unexpiredLeases > 0 ? 0 : TimeUnit.MICROSECONDS.toNanos(retryAfter),
                latestExpiry);
    }

    /** Extends this instance's membership; false if it had expired (or was taken over): it must register again. */
    boolean renew(Connection raw, String prefix, String memberName, String memberOwner, long ttlNanos)
            throws SQLException {
        return rows.renew(raw, prefix, memberName, memberOwner, ttlNanos);
    }

    /** The leader windows of the fleet's live NAMED members. */
    FleetRows.LeaderWindows leaderWindows(Connection raw) throws SQLException {
        return rows.leaderWindows(raw);
    }

    /** Ends this instance's membership (at shutdown): the fleet may change engine once every member has left. */
    void leave(Connection raw, String memberName, String memberOwner) throws SQLException {
        rows.leave(raw, memberName, memberOwner);
    }

    /** The engine a record's or membership's owner names first, or null. */
    private static String describe(String recorded) {
        return recorded == null ? "no record" : "recorded as '" + recorded + "'";
    }

    private static String truncate(String owner) {
        return owner.length() <= OWNER_LENGTH ? owner : owner.substring(0, OWNER_LENGTH);
    }
}
