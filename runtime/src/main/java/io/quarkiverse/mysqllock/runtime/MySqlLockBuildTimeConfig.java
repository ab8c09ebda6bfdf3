package io.quarkiverse.mysqllock.runtime;

import java.util.Optional;

import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Configuration fixed when the application is built. */
@ConfigMapping(prefix = "quarkus.mysql-lock")
@ConfigRoot(phase = ConfigPhase.BUILD_AND_RUN_TIME_FIXED)
public interface MySqlLockBuildTimeConfig {

    /**
     * The datasource that holds the locks: the name of a datasource configured with {@code quarkus.datasource."name".*}.
     * Unset: the default datasource. It must be a MySQL or MariaDB datasource; the build fails otherwise.
     */
    Optional<String> datasource();

    /**
     * Locks in the JVM's memory, no database (no datasource is needed): for tests and dev mode only, the build fails
     * with it in a production build. The LEASE engine's contract, in one JVM (see the guide's test kit page). Set it for
     * those profiles only: {@code %test.quarkus.mysql-lock.in-memory=true}.
     */
    @WithDefault("false")
    boolean inMemory();

    /** Health checks. */
    Health health();

    /** Metrics. */
    Metrics metrics();

    /** REST. */
    Rest rest();

    /** The admin resource. */
    Admin admin();

    interface Admin {
        /**
         * Whether the admin resource is served, under {@code /mysql-lock/admin} of the application's REST root: the
         * fleet's scheduled jobs with their history and changes, pause, resume, disable, enable and run-now, the lock
         * holders, and a lock released by force. Every call needs the role {@code quarkus.mysql-lock.admin.role}, and
         * every change is recorded in the audit trail under the authenticated user's name. Needs {@code quarkus-rest} and
         * a security extension (the build fails without them). Off by default.
         */
        @WithDefault("false")
        boolean enabled();
    }

    interface Rest {
        /**
         * Whether a {@code LockNotAcquiredException} escaping a REST resource method becomes an HTTP answer, when
         * {@code quarkus-rest} is present: {@code BUSY} and {@code DEADLOCK} 409 Conflict, {@code POOL_EXHAUSTED} 503
         * with {@code Retry-After: 1}, {@code DATABASE_ERROR} and {@code READ_ONLY} 503 with {@code Retry-After: 5},
         * {@code INTERRUPTED} 503 without it, and a JSON body {@code {"lock", "reason", "waitedMs"}}. An application's own
         * exception mapper of it wins. Off by
         * default: without it the exception is a 500, as any other.
         */
        @WithDefault("false")
        boolean mapExceptions();
    }

    interface Metrics {
        /**
         * Whether lock metrics are published when {@code quarkus-micrometer} is present: acquisitions by outcome, wait
         * and hold time histograms, locks held, locks lost by cause, pinned connections, renewals; tagged by engine
         * and datasource, never by lock name.
         */
        @WithDefault("true")
        boolean enabled();
    }

    interface Health {
        /**
         * Whether a readiness check of the locks is published when {@code quarkus-smallrye-health} is present: the
         * engine and why it was chosen, that the lock database answers, for NAMED that the pinned connections still
         * hold their locks, for LEASE that the server clock runs steadily.
         */
        @WithDefault("true")
        boolean enabled();
    }
}
