package io.quarkiverse.mysqllock.bench;

import java.time.Duration;
import java.util.Optional;

import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;

/**
 * The application's lock configuration with another engine, lease ttl and fenced commits, for a second manager in the
 * same JVM. It
 * uses a lock table of its own: the instances sharing a lock table use one engine (the fleet's agreement), so the
 * application's NAMED manager and this one cannot share the table.
 */
record WithMode(MySqlLockRuntimeConfig config, Mode mode, Duration ttl, boolean fenced)
        implements
            MySqlLockRuntimeConfig {

    WithMode(MySqlLockRuntimeConfig config, Mode mode, Duration ttl) {
        this(config, mode, ttl, false);
    }

    @Override
    public java.util.Map<String, DataSourceSettings> datasources() {
        return java.util.Map.of();
    }

    @Override
    public JobHistory jobHistory() {
        return config.jobHistory();
    }

    @Override
    public java.util.Map<String, JobSettings> jobs() {
        return config.jobs();
    }

    @Override
    public Admin admin() {
        return config.admin();
    }

    /** The lock table of a manager of the other engine. */
    static String table(MySqlLockRuntimeConfig config, Mode mode) {
        return config.table().or(() -> config.lease().table()).orElse("mysql_lock") + "_"
                + mode.name().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public Optional<Boolean> replication() {
        return config.replication();
    }

    @Override
    public Optional<String> namespace() {
        return config.namespace();
    }

    @Override
    public Optional<String> instanceId() {
        return config.instanceId();
    }

    @Override
    public Optional<Duration> longHoldWarning() {
        return config.longHoldWarning();
    }

    @Override
    public Duration shutdownWait() {
        return config.shutdownWait();
    }

    @Override
    public Duration defaultWait() {
        return config.defaultWait();
    }

    @Override
    public Duration connectionWait() {
        return config.connectionWait();
    }

    @Override
    public Duration statementTimeout() {
        return config.statementTimeout();
    }

    @Override
    public ServerFlavor serverFlavor() {
        return config.serverFlavor();
    }

    @Override
    public Optional<String> table() {
        return Optional.of(WithMode.table(config, mode));
    }

    @Override
    public Optional<Boolean> createTable() {
        return config.createTable().or(() -> config.lease().createTable());
    }

    /** {@code fenced-commit}: on NAMED, every grant issues its fencing token at once. */
    @Override
    public boolean fencedCommit() {
        return fenced;
    }

    @Override
    public Named named() {
        return config.named();
    }

    @Override
    public Lease lease() {
        Lease lease = config.lease();
        return new Lease() {
            @Override
            public Optional<String> table() {
                return Optional.empty();
            }

            @Override
            public Optional<Boolean> createTable() {
                return Optional.empty();
            }

            @Override
            public Duration ttl() {
                return ttl;
            }

            @Override
            public Optional<Duration> renewInterval() {
                return Optional.empty();
            }

            @Override
            public Duration maxClockSkew() {
                return lease.maxClockSkew();
            }
        };
    }
}
