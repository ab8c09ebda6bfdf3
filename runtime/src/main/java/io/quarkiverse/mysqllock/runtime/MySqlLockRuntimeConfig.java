package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import io.quarkiverse.mysqllock.jobs.MissedTicks;
import io.quarkiverse.mysqllock.jobs.Overlap;
import io.quarkus.runtime.annotations.ConfigDocMapKey;
import io.quarkus.runtime.annotations.ConfigDocSection;
import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithParentName;

/**
 * Configuration read when the application starts. The settings apply to the locks of every datasource; a datasource's
 * own, {@code quarkus.mysql-lock."datasource-name".*}, override them for that datasource's locks ({@link #datasources()}).
 */
@ConfigMapping(prefix = "quarkus.mysql-lock")
@ConfigRoot(phase = ConfigPhase.RUN_TIME)
public interface MySqlLockRuntimeConfig {

    /**
     * The engine: {@code auto} picks {@code lease} when replication is configured (see {@code replication}) and
     * {@code named} otherwise, and logs why; {@code named} uses the server's named locks ({@code GET_LOCK}), which are
     * not replicated; {@code lease} uses leases in the lock table. {@code in-memory} is deprecated: set
     * {@code quarkus.mysql-lock.in-memory=true}, read when the application is built (this value still counts when the
     * build sees it, with a warning).
     */
    @WithDefault("auto")
    Mode mode();

    /**
     * Whether the database is replicated, for {@code mode=auto}. {@code true} picks the LEASE engine; {@code false}
     * skips replication detection and picks NAMED, except on a Galera node, a member of a multi-primary Group
     * Replication group or a read-only server, where named locks cannot work (LEASE, and the start-up line says why).
     * Unset: detected from the JDBC URL (replication, load-balance, multi-host) and from what the server reports
     * (Galera, group replication, a running replica thread, connected replicas).
     */
    Optional<Boolean> replication();

    /**
     * A prefix added to every lock name on the server, so that applications sharing one database server do not see
     * each other's locks. Letters, digits, {@code _ - . :} only, at most 32 characters. Unset: no prefix, lock names
     * go to the server as the application gives them.
     */
    Optional<String> namespace();

    /**
     * The instance part of the holder identity {@code <host>/<pid>/<instance-id>}. Unset: a random id per start, so
     * that no two processes ever share an identity. The identity is cut at 200 characters.
     */
    Optional<String> instanceId();

    /** How long {@code LockManager.acquire(name)} (the overload without a wait) waits for the lock. */
    @WithDefault("0s")
    Duration defaultWait();

    /**
     * How long an acquisition may wait for a free connection of the datasource when its own wait is shorter. Each held
     * NAMED lock keeps one connection out of the pool; when the pool is exhausted an acquisition fails after
     * {@code max(wait, connection-wait)} with {@code LockNotAcquiredException} (reason POOL_EXHAUSTED).
     */
    @WithDefault("1s")
    Duration connectionWait();

    /**
     * The longest any statement of the engines may go without an answer, beyond the waits it was asked to make (a
     * {@code GET_LOCK} wait; a row-lock wait, up to the server's {@code innodb_lock_wait_timeout}). A statement with no
     * answer in time is abandoned and its connection closed: the network or the server stalled. Locks held on that
     * connection are reported lost to their holders; one stalled connection never delays the checks of the others.
     */
    @WithDefault("10s")
    Duration statementTimeout();

    /**
     * Which server's {@code GET_LOCK} semantics to use: {@code auto} reads the server version; {@code mysql} waits in
     * whole seconds on the server and polls for the fraction; {@code mariadb} passes fractional waits to the server.
     */
    @WithDefault("auto")
    ServerFlavor serverFlavor();

    /**
     * The lock table's name: an identifier, optionally schema-qualified ({@code schema.table}). Both engines use it
     * (fencing tokens, the fleet's memberships; the LEASE engine's leases). Unset: {@code mysql_lock}.
     */
    Optional<String> table();

    /** Create the lock table on first use when it does not exist. Unset: {@code true}. */
    Optional<Boolean> createTable();

    /**
     * Fenced commits: a JTA transaction that ran under a lock of this datasource commits only if no later holder was
     * granted the lock meanwhile. Before it commits, it reads the lock's fence in the lock table under a shared row lock,
     * through its own connection; a later holder's token makes it roll back ({@code LockLostException}). It costs one
     * statement per transaction and lock, and on NAMED one more per grant (its fencing token, issued at once). The
     * transaction's writes must go to this datasource's database. Off: a lock released inside a transaction is still
     * released after its commit, and one found lost then marks the transaction rollback-only.
     */
    @WithDefault("false")
    boolean fencedCommit();

    /**
     * Logs a warning, once per hold, for each lock this instance has held longer than this: a job that hangs keeps its
     * lock, and nothing else says so until the next run is skipped. Looked at every quarter of it (between 1 s and 1
     * min). Unset: no warning.
     */
    Optional<Duration> longHoldWarning();

    /**
     * How long the application's shutdown waits for the locks still held by work in progress (a running
     * {@code @Locked} method or scheduled job, a {@code withLock} body, a handle not released yet) to be released by
     * their holders, before it releases them and tells their holders ({@code onLost}, reason {@code SHUTDOWN}).
     * Quarkus ends its beans before its worker threads: a lock released at once could be taken by another instance
     * while this one's work still runs. Leader roles, and locks kept only by their {@code atLeastFor}, end at once.
     * No run of a scheduled job starts meanwhile. Keep it below the grace period of whatever stops the process
     * (Kubernetes: 30 s by default). {@code 0s}: release every lock at once.
     */
    @WithDefault("20s")
    Duration shutdownWait();

    /** The NAMED engine. */
    @ConfigDocSection
    Named named();

    /** The admin resource ({@code quarkus.mysql-lock.admin.enabled}). */
    @ConfigDocSection
    Admin admin();

    interface Admin {
        /** The role every call of the admin resource needs. */
        @WithDefault("mysql-lock-admin")
        String role();
    }

    /** The run history of scheduled jobs ({@code @Locked} methods with a {@code ScheduledExecution} parameter). */
    @ConfigDocSection
    JobHistory jobHistory();

    /**
     * Settings of one scheduled job, by its name (its lock's name, as the application wrote it):
     * {@code quarkus.mysql-lock.jobs."cron\:nightly-report".alert-after=26h} (in {@code application.properties}, a
     * {@code :} of the name escaped so). A name that is no job of the application fails the start.
     */
    @ConfigDocMapKey("job-name")
    @ConfigDocSection
    Map<String, JobSettings> jobs();

    /** One scheduled job's settings. */
    interface JobSettings {
        /**
         * The wellness check ({@code /q/health/well}) goes DOWN when no run of this job has succeeded anywhere in the
         * fleet for this long (counted from its first claimed tick if it never succeeded, and from this instance's start
         * if no instance ever claimed one), while the job is active: a job that has silently stopped. Judged from the
         * jobs table, on the database server's clock. Never a readiness check: a silent job does not take an instance
         * out of the load balancer. Unset: no alert.
         */
        Optional<Duration> alertAfter();

        /**
         * What the job does about ticks no instance of the fleet ran (every instance down, or the job paused): skip
         * them, run once for them all, or run each. A catch-up runs on one instance, right after the first tick that
         * runs once the job can run again, recorded in its history as {@code CATCH_UP}. Ticks missed while the job was
         * disabled are not caught up. Needs a job method that can run outside its schedule: one whose only parameter
         * is its {@code ScheduledExecution}, with one {@code @Scheduled}, not a Kotlin {@code suspend} function.
         */
        @WithDefault("skip")
        MissedTicks missedTicks();

        /**
         * How far back from the last missed tick a catch-up looks: older missed ticks are not caught up. At least a
         * second.
         */
        @WithDefault("24h")
        Duration catchUpWindow();

        /**
         * {@code missed-ticks=run-all}: at most this many runs catch up, for the latest missed ticks. From 1 to
         * 1000.
         */
        @WithDefault("10")
        int maxCatchUpRuns();

        /**
         * What a tick does that fires while a run of this job still lasts, on any instance of the fleet: skip it
         * (recorded {@code SKIPPED_BUSY}), or queue one more run, which follows once the run that lasted has ended
         * (the tick recorded {@code QUEUED}, the run {@code QUEUED}): however many ticks fired meanwhile, one run. Needs
         * a job method that can run outside its schedule, as {@code missed-ticks} does.
         */
        @WithDefault("skip")
        Overlap overlap();
    }

    interface JobHistory {
        /**
         * How many rows of each scheduled job's history are kept (its runs and the ticks it skipped): the latest ones.
         * Older rows are removed by the instance that ends a run of the job, in batches of 500 rows, at most every ten
         * minutes per job. At least 1.
         */
        @WithDefault("1000")
        int keepRuns();

        /**
         * How long a row of a scheduled job's history is kept, from the start of its run: older rows are removed as
         * {@code keep-runs} says, whatever their number. At least a minute.
         */
        @WithDefault("30d")
        Duration keepFor();
    }

    /** The LEASE engine. */
    @ConfigDocSection
    Lease lease();

    interface Named {
        /**
         * How often every connection that holds locks is checked: it must still be the same server session and still
         * own each of its locks ({@code IS_USED_LOCK(name) = CONNECTION_ID()}). A lock found lost is reported to its
         * holder through {@code isValid()} and {@code onLost} within this period. The check also keeps the connection
         * from idling out ({@code wait_timeout}). Instances of a fleet may run with different values (a rolling change):
         * a new strict leader waits two intervals of the slowest live instance.
         */
        @WithDefault("10s")
        Duration keepaliveInterval();

        /**
         * Leader elections on the NAMED engine ({@code LockManager.election}, {@code @WhileLeader}): whether a new
         * leader's term begins as soon as it holds the role's lock. Off (the default): a term begins two keepalive
         * intervals after the grant, and a leader whose session no keepalive check confirmed within two intervals stops
         * leading (its term is revoked, reason {@code CONNECTION_LOST}), so that no two instances ever say they lead at
         * once, even when the server ends a leader's session or the leader was paused; a hand-over then takes about two
         * keepalive intervals. On: the next leader takes over within milliseconds, and a former leader whose session the
         * server ended may still say it leads until its next keepalive check: fence its work with the term. It holds
         * only while every live instance of the fleet has it: until then (a rolling change) terms stay strict.
         */
        @WithDefault("false")
        boolean instantLeaderHandOver();

        /**
         * How many connections at most hold, together, the locks that the server grants at once, whichever thread asks:
         * several locks of several threads share one connection, so 10,000 held locks need no more than this. A new
         * one is opened only when every shared connection is inside a statement, so their number follows how many
         * lock statements run at the same moment; when the pool has no connection to spare, threads take turns on
         * the existing ones. A lock that must be waited for is waited for on a connection of the waiting thread's
         * own, which then also takes that thread's further locks until it holds none. A shared connection that holds
         * nothing goes back to the pool after a second. {@code 0}: every thread holding locks keeps a connection of
         * its own.
         */
        @WithDefault("16")
        int sharedConnections();
    }

    interface Lease {
        /** How long a lease lasts unless renewed. The watchdog renews held leases long before it ends. */
        @WithDefault("30s")
        Duration ttl();

        /**
         * How often held leases are renewed. Unset: a third of the ttl. At most half the ttl less the loss margin
         * ({@code 2 x (renew-interval + loss margin) <= ttl}, the margin a tenth of the ttl, at most 250 ms), so that
         * one failed or late renewal costs no lease; the start refuses a longer one.
         */
        Optional<Duration> renewInterval();

        /**
         * How far apart the clocks of the database servers may be (the nodes of a Galera cluster, a primary and the
         * replica a failover promotes): the only clock assumption of the LEASE engine. No lease is taken over by
         * comparing clocks: an instance takes over another's lease only once it saw the lease's row unchanged (not
         * renewed) for the whole lease and a margin, measured by its own monotonic clock, and a renewal changes the row,
         * so a live holder's lease is never taken whatever any clock says. The one shortcut: a lease whose end, by the
         * clock of the server that takes it, lies further in the past than this is taken at once (its holder is long
         * dead), so that a new instance does not wait a ttl for a lock whose holder died long ago. A server whose clock
         * runs ahead of another's by more than this takes the readiness check down (rows written there lie in the
         * other's future). Lower it only where the clocks are kept in step (then long-dead leases are taken sooner);
         * 0 takes every lease at its end by the server's clock, with no allowance for skew at all.
         */
        @WithDefault("15m")
        Duration maxClockSkew();

        /**
         * Deprecated: use {@code quarkus.mysql-lock.table}, which it means (the NAMED engine uses the table too). Still
         * read, with a warning; set to another value than {@code quarkus.mysql-lock.table}, the start fails.
         */
        @Deprecated
        Optional<String> table();

        /**
         * Deprecated: use {@code quarkus.mysql-lock.create-table}, which it means. Still read, with a warning; set to
         * another value than {@code quarkus.mysql-lock.create-table}, the start fails.
         */
        @Deprecated
        Optional<Boolean> createTable();
    }

    /**
     * Settings for the locks of one datasource ({@code @DataSource("name") LockManager}, {@code @Locked(datasource =
     * "name")}; {@code "<default>"} for the default datasource), over the settings above, which apply to every
     * datasource: {@code quarkus.mysql-lock."orders".mode=lease} makes the locks of datasource {@code orders} LEASE
     * locks whatever {@code quarkus.mysql-lock.mode} says. A setting a datasource does not set is the one above. A
     * name that is no MySQL or MariaDB datasource of the application fails the start.
     */
    @ConfigDocMapKey("datasource-name")
    @ConfigDocSection
    @WithParentName
    Map<String, DataSourceSettings> datasources();

    /** One datasource's settings: each overrides the application-wide setting of the same name. */
    interface DataSourceSettings {
        /**
         * The engine of this datasource's locks: {@code auto}, {@code named} or {@code lease}. Unset:
         * {@code quarkus.mysql-lock.mode}.
         */
        Optional<Mode> mode();

        /**
         * Whether this datasource's database is replicated, for {@code mode=auto}. Unset:
         * {@code quarkus.mysql-lock.replication}.
         */
        Optional<Boolean> replication();

        /** A prefix added to every lock name of this datasource on the server. Unset: {@code quarkus.mysql-lock.namespace}. */
        Optional<String> namespace();

        /**
         * How long {@code LockManager.acquire(name)} waits, for this datasource's manager. Unset:
         * {@code quarkus.mysql-lock.default-wait}.
         */
        Optional<Duration> defaultWait();

        /**
         * How long an acquisition may wait for a free connection of this datasource. Unset:
         * {@code quarkus.mysql-lock.connection-wait}.
         */
        Optional<Duration> connectionWait();

        /**
         * The longest a statement on this datasource may go without an answer beyond its waits. Unset:
         * {@code quarkus.mysql-lock.statement-timeout}.
         */
        Optional<Duration> statementTimeout();

        /**
         * Which server's {@code GET_LOCK} semantics this datasource's server has. Unset:
         * {@code quarkus.mysql-lock.server-flavor}.
         */
        Optional<ServerFlavor> serverFlavor();

        /** This datasource's lock table. Unset: {@code quarkus.mysql-lock.table}. */
        Optional<String> table();

        /**
         * Whether this datasource's lock table is created on first use when it does not exist. Unset:
         * {@code quarkus.mysql-lock.create-table}.
         */
        Optional<Boolean> createTable();

        /** Fenced commits for this datasource's locks. Unset: {@code quarkus.mysql-lock.fenced-commit}. */
        Optional<Boolean> fencedCommit();

        /**
         * The hold time after which a lock of this datasource is logged as held long. Unset:
         * {@code quarkus.mysql-lock.long-hold-warning}.
         */
        Optional<Duration> longHoldWarning();

        /** This datasource's NAMED engine. */
        NamedSettings named();

        /** This datasource's LEASE engine. */
        LeaseSettings lease();
    }

    /** One datasource's NAMED engine settings. */
    interface NamedSettings {
        /**
         * How often this datasource's connections that hold locks are checked. Unset:
         * {@code quarkus.mysql-lock.named.keepalive-interval}.
         */
        Optional<Duration> keepaliveInterval();

        /**
         * Whether this datasource's NAMED leaders hand over at once. Unset:
         * {@code quarkus.mysql-lock.named.instant-leader-hand-over}.
         */
        Optional<Boolean> instantLeaderHandOver();

        /**
         * How many connections of this datasource hold, together, the locks granted at once. Unset:
         * {@code quarkus.mysql-lock.named.shared-connections}.
         */
        Optional<Integer> sharedConnections();
    }

    /** One datasource's LEASE engine settings. */
    interface LeaseSettings {
        /** How long a lease of this datasource lasts unless renewed. Unset: {@code quarkus.mysql-lock.lease.ttl}. */
        Optional<Duration> ttl();

        /** How often this datasource's held leases are renewed. Unset: {@code quarkus.mysql-lock.lease.renew-interval}. */
        Optional<Duration> renewInterval();

        /**
         * How far apart the clocks of this datasource's database servers may be. Unset:
         * {@code quarkus.mysql-lock.lease.max-clock-skew}.
         */
        Optional<Duration> maxClockSkew();
    }

    /** The engine choice. */
    enum Mode {
        AUTO,
        NAMED,
        LEASE,
        /** Deprecated: {@code quarkus.mysql-lock.in-memory=true}. */
        IN_MEMORY
    }

    /** Which server's named-lock semantics apply. */
    enum ServerFlavor {
        AUTO,
        MYSQL,
        MARIADB
    }
}
