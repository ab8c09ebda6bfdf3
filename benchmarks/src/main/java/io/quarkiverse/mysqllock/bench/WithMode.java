package io.quarkiverse.mysqllock.bench;

import java.time.Duration;
import java.util.Optional;

import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;

/** The application's lock configuration with another engine and lease ttl, for a second manager in the same JVM. */
record WithMode(MySqlLockRuntimeConfig config, Mode mode, Duration ttl) implements MySqlLockRuntimeConfig {

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
    public Named named() {
        return config.named();
    }

    @Override
    public Lease lease() {
        Lease lease = config.lease();
        return new Lease() {
            @Override
            public String table() {
                return lease.table();
            }

            @Override
            public boolean createTable() {
                return lease.createTable();
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
            public Optional<Duration> maxClockSkew() {
                return lease.maxClockSkew();
            }
        };
    }
}
