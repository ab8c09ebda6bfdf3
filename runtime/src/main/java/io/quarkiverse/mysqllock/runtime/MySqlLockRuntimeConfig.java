package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;
import java.util.Optional;

import io.quarkus.runtime.annotations.ConfigDocSection;
import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Configuration read when the application starts. */
@ConfigMapping(prefix = "quarkus.mysql-lock")
@ConfigRoot(phase = ConfigPhase.RUN_TIME)
public interface MySqlLockRuntimeConfig {

    /**
     * A prefix added to every lock name on the server, so that applications sharing one database server do not see
     * each other's locks. Letters, digits, {@code _ - . :} only, at most 32 characters.
     */
    Optional<String> namespace();

    /**
     * The instance part of the holder identity {@code <host>/<pid>/<instance-id>}. Unset: a random id per start, so
     * that no two processes ever share an identity.
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
     * Which server's {@code GET_LOCK} semantics to use: {@code auto} reads the server version; {@code mysql} waits in
     * whole seconds on the server and polls for the fraction; {@code mariadb} passes fractional waits to the server.
     */
    @WithDefault("auto")
    ServerFlavor serverFlavor();

    /** The NAMED engine. */
    @ConfigDocSection
    Named named();

    /** The lock table (fencing tokens of both engines, leases of the LEASE engine). */
    @ConfigDocSection
    Lease lease();

    interface Named {
        /**
         * How often every connection that holds locks is checked: it must still be the same server session and still
         * own each of its locks ({@code IS_USED_LOCK(name) = CONNECTION_ID()}). A lock found lost is reported to its
         * holder through {@code isValid()} and {@code onLost} within this period. The check also keeps the connection
         * from idling out ({@code wait_timeout}).
         */
        @WithDefault("10s")
        Duration keepaliveInterval();
    }

    interface Lease {
        /** The lock table's name: an identifier, optionally schema-qualified ({@code schema.table}). */
        @WithDefault("mysql_lock")
        String table();

        /** Create the lock table on first use when it does not exist. */
        @WithDefault("true")
        boolean createTable();
    }

    /** Which server's named-lock semantics apply. */
    enum ServerFlavor {
        AUTO,
        MYSQL,
        MARIADB
    }
}
