package io.quarkiverse.mysqllock.it;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.it.FaultSuite.Kind;
import io.quarkiverse.mysqllock.test.ReplicatedServers.Durability;

/**
 * What a run attacks: one engine on a single server with every single-server fault, or the LEASE engine on a
 * replicated pair that fails over again and again (the only fault there), with lossless semi-synchronous or with
 * asynchronous replication. Asynchronous failover loses acknowledged transactions: no lock can hold its guarantees
 * through it, and that run shows what breaks instead of passing.
 * <p>
 * The fault suite's scenarios: each says what its workers do ({@link #workload()}), on what database topology, with
 * which clock skew, which {@linkplain #kinds() kinds of fault} it rotates through and whether its guarantees must hold
 * ({@link #guaranteed()}). {@link FaultSuite} runs the scenarios of {@code faults.scenarios} in turn, each on a
 * {@link FaultEnvironment} built from it, while {@link FaultInjector} injects its kinds of fault.
 */
enum Scenario {
    NAMED(LockMode.NAMED, null, "NAMED"),
    LEASE(LockMode.LEASE, null, "LEASE"),
    FAILOVER_SEMISYNC(LockMode.LEASE, Durability.SEMISYNC, "LEASE, semi-sync failover"),
    FAILOVER_ASYNC(LockMode.LEASE, Durability.ASYNC, "LEASE, async failover"),
    /** A 3-node Galera cluster, each worker on a node of its own. */
    GALERA(LockMode.LEASE, null, "LEASE, Galera cluster"),
    /**
     * The same with node 3's clock 10 minutes ahead, within the default max-clock-skew (15 minutes): observed expiry
     * keeps every guarantee whatever the clocks read.
     */
    GALERA_SKEW_WITHIN(LockMode.LEASE, null, "LEASE, Galera, a node 10 min ahead (bound 15 min)"),
    /**
     * Node 3's clock 3 s ahead, beyond a max-clock-skew of 1 s: the long-dead shortcut takes live leases there;
     * shows what breaks, and its detection.
     */
    GALERA_SKEW_BEYOND(LockMode.LEASE, null, "LEASE, Galera, a node 3 s ahead (bound 1 s)"),
    /**
     * Leader election on one server ({@link LeaderWorker}): every worker joins the election of each hot name's role,
     * each term is a section fenced by its number, and the faults that hit one worker hit a leader.
     */
    LEADER_NAMED(LockMode.NAMED, null, "leader election, NAMED"),
    LEADER_LEASE(LockMode.LEASE, null, "leader election, LEASE"),
    /**
     * A semaphore of as many permits as there are hot names, on one server: every worker thread takes a permit,
     * each permit's lock is a hot name ({@code <semaphore>#permit-<i>}), so the checker's rules hold per permit and
     * no more holders than permits are ever inside.
     */
    SEMAPHORE_NAMED(LockMode.NAMED, null, "semaphore, NAMED"),
    SEMAPHORE_LEASE(LockMode.LEASE, null, "semaphore, LEASE"),
    /**
     * A scheduled job every second ({@link FaultJobs}) on every worker, {@code missed-ticks=run-all}, paused, resumed
     * and run now through the admin resource between the faults, every worker killed at once now and then
     * ({@link JobChecker} judges the ticks); each run a section on the job's lock.
     */
    SCHEDULING_NAMED(LockMode.NAMED, null, "scheduled jobs, NAMED"),
    SCHEDULING_LEASE(LockMode.LEASE, null, "scheduled jobs, LEASE"),
    /**
     * Critical sections that write in a JTA transaction under the lock ({@code TransactionWorker}), with
     * {@code quarkus.mysql-lock.fenced-commit=true}: no commit may land once a later holder was granted the lock
     * ({@link TransactionChecker}).
     */
    TRANSACTIONS_NAMED(LockMode.NAMED, null, "transactions, fenced commits, NAMED"),
    TRANSACTIONS_LEASE(LockMode.LEASE, null, "transactions, fenced commits, LEASE"),
    /** The same without fenced commits: shows the stale commits the checker counts (not a failure of the run). */
    TRANSACTIONS_UNFENCED_NAMED(LockMode.NAMED, null, "transactions, commits not fenced, NAMED"),
    TRANSACTIONS_UNFENCED_LEASE(LockMode.LEASE, null, "transactions, commits not fenced, LEASE");

    final LockMode engine;
    /** Null on a single server. */
    final Durability replication;
    final String label;

    Scenario(LockMode engine, Durability replication, String label) {
        this.engine = engine;
        this.replication = replication;
        this.label = label;
    }

    boolean leader() {
        return this == LEADER_NAMED || this == LEADER_LEASE;
    }

    boolean semaphore() {
        return this == SEMAPHORE_NAMED || this == SEMAPHORE_LEASE;
    }

    boolean jobs() {
        return this == SCHEDULING_NAMED || this == SCHEDULING_LEASE;
    }

    boolean transactions() {
        return fencedCommit() || this == TRANSACTIONS_UNFENCED_NAMED || this == TRANSACTIONS_UNFENCED_LEASE;
    }

    /** Whether the workers fence their commits ({@code quarkus.mysql-lock.fenced-commit}). */
    boolean fencedCommit() {
        return this == TRANSACTIONS_NAMED || this == TRANSACTIONS_LEASE;
    }

    /** What the workers do: {@code FaultWorker}'s {@code fault-worker.workload}. */
    String workload() {
        return leader() ? "leader" : semaphore() ? "semaphore" : jobs() ? "jobs" : transactions() ? "transactions" : "locks";
    }

    boolean galera() {
        return this == GALERA || this == GALERA_SKEW_WITHIN || this == GALERA_SKEW_BEYOND;
    }

    /** How far ahead node 3's clock runs. */
    Duration nodeAhead() {
        return switch (this) {
            case GALERA_SKEW_WITHIN -> Duration.ofMinutes(10);
            case GALERA_SKEW_BEYOND -> Duration.ofSeconds(3);
            default -> Duration.ZERO;
        };
    }

    /** The workers' quarkus.mysql-lock.lease.max-clock-skew. */
    Duration maxClockSkew() {
        return this == GALERA_SKEW_BEYOND ? Duration.ofSeconds(1) : Duration.ofMinutes(15);
    }

    /** Whether the workers connect as a plain user (privilege checks on); root on replicated servers. */
    boolean plainUser() {
        return replication == null && !galera();
    }

    /** Whether the lock's guarantees must hold (a violation fails the run), or the run shows what breaks. */
    boolean guaranteed() {
        return replication != Durability.ASYNC && this != GALERA_SKEW_BEYOND && (!transactions() || fencedCommit());
    }

    /** What a run of a scenario without guarantees shows, for its violations. */
    String unguaranteed() {
        if (transactions()) {
            return "what commits not fenced let through: a holder's commit after a later holder was granted the lock"
                    + " (shown on purpose, not a failure of the run)";
        }
        return this == GALERA_SKEW_BEYOND
                ? "what a server clock ahead beyond max-clock-skew breaks (shown on purpose, not a failure of the run)"
                : "what asynchronous replication cannot prevent (acknowledged transactions lost by the failover;"
                        + " not a failure of the run)";
    }

    List<Kind> kinds() {
        if (leader() || semaphore()) {
            // what ends a leader's term against its will: its death, its pause, its session, its network, the
            // database; and what must not: its application using up its pool, a fleet mid-way through a change
            return List.of(Kind.SIGKILL, Kind.PAUSE, Kind.KILL_SESSION, Kind.NETWORK_STALL, Kind.DB_RESTART,
                    Kind.POOL_SATURATION, Kind.ROLLING_RESTART);
        }
        if (jobs()) {
            // instances paused, killed and restarted, sessions killed, every instance down for a few ticks
            return List.of(Kind.SIGKILL, Kind.PAUSE, Kind.KILL_SESSION, Kind.FLEET_DOWN, Kind.NETWORK_STALL,
                    Kind.DB_RESTART, Kind.ROLLING_RESTART);
        }
        if (this == GALERA) {
            return List.of(Kind.NODE_KILL, Kind.NODE_PARTITION, Kind.NETWORK_CUT);
        }
        if (galera()) {
            // a holder that stops renewing (cut off, stalled, paused or dead), while a node ahead may take its
            // lease over
            return List.of(Kind.NODE_PARTITION, Kind.NETWORK_STALL, Kind.PAUSE, Kind.SIGKILL);
        }
        return replication == null ? Arrays.stream(Kind.values())
                .filter(k -> k != Kind.FAILOVER && k != Kind.NODE_KILL && k != Kind.NODE_PARTITION
                        && k != Kind.FLEET_DOWN)
                .toList()
                : List.of(Kind.FAILOVER);
    }

    static Scenario parse(String value) {
        String key = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        return Arrays.stream(values()).filter(s -> s.name().equals(key)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("Unknown fault scenario '" + value + "' in"
                        + " faults.scenarios: use named, lease, failover-semisync, failover-async, galera,"
                        + " galera-skew-within, galera-skew-beyond, leader-named, leader-lease, semaphore-named,"
                        + " semaphore-lease, scheduling-named, scheduling-lease, transactions-named, transactions-lease,"
                        + " transactions-unfenced-named or transactions-unfenced-lease"));
    }
}
