package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.DataSourceSettings;
import io.quarkus.runtime.configuration.ConfigurationException;

/**
 * The configuration of one datasource's locks: its own settings ({@code quarkus.mysql-lock."name".*}) over the
 * application-wide ones. The factory reads it as any configuration, and names in its messages the key a value came
 * from ({@link #key}).
 */
final class DataSourceLockConfig implements MySqlLockRuntimeConfig {

    /**
     * Map keys that application-wide settings also make, read as a datasource's: the deprecated
     * {@code quarkus.mysql-lock.lease.table} and {@code lease.create-table} ({@code table} and {@code create-table} of
     * a datasource {@code lease}), and, from environment variables, whose dashes and dots look alike,
     * {@code QUARKUS_MYSQL_LOCK_CREATE_TABLE} ({@code table} of {@code create}) and
     * {@code QUARKUS_MYSQL_LOCK_LEASE_CREATE_TABLE} ({@code table} of {@code lease-create}). Not datasource names, unless
     * the application has such a datasource.
     */
    private static final Set<String> APPLICATION_WIDE_LOOKALIKES = Set.of("lease", "create", "lease-create");

    private final MySqlLockRuntimeConfig all;
    private final String dataSource;
    private final DataSourceSettings own;

    private DataSourceLockConfig(MySqlLockRuntimeConfig all, String dataSource, DataSourceSettings own) {
        this.all = all;
        this.dataSource = dataSource;
        this.own = own;
    }

    /** The configuration of this datasource's locks: {@code all} itself where the datasource sets nothing of its own. */
    static MySqlLockRuntimeConfig of(MySqlLockRuntimeConfig all, String dataSource) {
        DataSourceSettings own = all.datasources().get(dataSource);
        if (own == null) {
            return all;
        }
        if (own.mode().orElse(null) == Mode.IN_MEMORY) {
            throw new ConfigurationException("quarkus.mysql-lock.\"" + dataSource + "\".mode=in-memory: in-memory locks"
                    + " are the whole application's, chosen when it is built (quarkus.mysql-lock.in-memory), not a"
                    + " datasource's. Use auto, named or lease for one datasource.");
        }
        return new DataSourceLockConfig(all, dataSource, own);
    }

    /**
     * Fails when {@code quarkus.mysql-lock."name".*} names a datasource that has no lock manager, which would otherwise
     * be ignored.
     *
     * @param managed the datasources that have a lock manager
     */
    static void checkNames(MySqlLockRuntimeConfig all, Set<String> managed) {
        Set<String> unknown = new TreeSet<>(all.datasources().keySet());
        unknown.removeAll(managed);
        unknown.removeAll(APPLICATION_WIDE_LOOKALIKES);
        if (!unknown.isEmpty()) {
            throw new ConfigurationException("quarkus.mysql-lock.\"" + unknown.iterator().next() + "\".* names no MySQL"
                    + " or MariaDB datasource of this application (datasources with locks: " + String.join(", ",
                            new TreeSet<>(managed))
                    + "; \"<default>\" is the default datasource). Fix the name, or remove the settings.");
        }
    }

    /** The key a setting of this configuration comes from, for messages: {@code relative} as in {@code lease.ttl}. */
    static String key(MySqlLockRuntimeConfig config, String relative) {
        if (config instanceof DataSourceLockConfig own && own.setsItself(relative)) {
            return "quarkus.mysql-lock.\"" + own.dataSource + "\"." + relative;
        }
        return "quarkus.mysql-lock." + relative;
    }

    private boolean setsItself(String relative) {
        Map<String, Optional<?>> settings = Map.ofEntries(Map.entry("mode", own.mode()),
                Map.entry("replication", own.replication()), Map.entry("namespace", own.namespace()),
                Map.entry("default-wait", own.defaultWait()), Map.entry("connection-wait", own.connectionWait()),
                Map.entry("statement-timeout", own.statementTimeout()), Map.entry("server-flavor", own.serverFlavor()),
                Map.entry("table", own.table()), Map.entry("create-table", own.createTable()),
                Map.entry("fenced-commit", own.fencedCommit()),
                Map.entry("long-hold-warning", own.longHoldWarning()),
                Map.entry("named.keepalive-interval", own.named().keepaliveInterval()),
                Map.entry("named.instant-leader-hand-over", own.named().instantLeaderHandOver()),
                Map.entry("named.shared-connections", own.named().sharedConnections()),
                Map.entry("lease.ttl", own.lease().ttl()), Map.entry("lease.renew-interval", own.lease().renewInterval()),
                Map.entry("lease.max-clock-skew", own.lease().maxClockSkew()));
        return settings.getOrDefault(relative, Optional.empty()).isPresent();
    }

    private static <T> T either(Optional<T> own, T all) {
        return own.orElse(all);
    }

    @Override
    public Mode mode() {
        return either(own.mode(), all.mode());
    }

    @Override
    public Optional<Boolean> replication() {
        return own.replication().or(all::replication);
    }

    @Override
    public Optional<String> namespace() {
        return own.namespace().or(all::namespace);
    }

    @Override
    public Optional<String> instanceId() {
        return all.instanceId();
    }

    @Override
    public Duration defaultWait() {
        return either(own.defaultWait(), all.defaultWait());
    }

    @Override
    public Duration connectionWait() {
        return either(own.connectionWait(), all.connectionWait());
    }

    @Override
    public Duration statementTimeout() {
        return either(own.statementTimeout(), all.statementTimeout());
    }

    @Override
    public ServerFlavor serverFlavor() {
        return either(own.serverFlavor(), all.serverFlavor());
    }

    @Override
    public Optional<String> table() {
        return own.table().or(all::table);
    }

    @Override
    public Optional<Boolean> createTable() {
        return own.createTable().or(all::createTable);
    }

    @Override
    public boolean fencedCommit() {
        return either(own.fencedCommit(), all.fencedCommit());
    }

    @Override
    public Optional<Duration> longHoldWarning() {
        return own.longHoldWarning().or(all::longHoldWarning);
    }

    @Override
    public Named named() {
        Named named = all.named();
        return new Named() {
            @Override
            public Duration keepaliveInterval() {
                return either(own.named().keepaliveInterval(), named.keepaliveInterval());
            }

            @Override
            public boolean instantLeaderHandOver() {
                return either(own.named().instantLeaderHandOver(), named.instantLeaderHandOver());
            }

            @Override
            public int sharedConnections() {
                return either(own.named().sharedConnections(), named.sharedConnections());
            }
        };
    }

    @Override
    public Lease lease() {
        Lease lease = all.lease();
        return new Lease() {
            @Override
            public Duration ttl() {
                return either(own.lease().ttl(), lease.ttl());
            }

            @Override
            public Optional<Duration> renewInterval() {
                return own.lease().renewInterval().or(lease::renewInterval);
            }

            @Override
            public Duration maxClockSkew() {
                return either(own.lease().maxClockSkew(), lease.maxClockSkew());
            }

            /** The deprecated application-wide key: a datasource sets its table with {@code table}. */
            @Override
            public Optional<String> table() {
                return own.table().isPresent() ? Optional.empty() : lease.table();
            }

            @Override
            public Optional<Boolean> createTable() {
                return own.createTable().isPresent() ? Optional.empty() : lease.createTable();
            }
        };
    }

    /** The application's: one admin resource serves every datasource. */
    @Override
    public Admin admin() {
        return all.admin();
    }

    /** The application's: it shuts down once, whatever datasource its locks are on. */
    @Override
    public Duration shutdownWait() {
        return all.shutdownWait();
    }

    /** The application's: the history of every datasource's jobs is kept alike. */
    @Override
    public JobHistory jobHistory() {
        return all.jobHistory();
    }

    /** The application's: a job is one, whatever datasource its lock is on. */
    @Override
    public Map<String, JobSettings> jobs() {
        return all.jobs();
    }

    /** None: this is one datasource's configuration already. */
    @Override
    public Map<String, DataSourceSettings> datasources() {
        return Map.of();
    }

    @Override
    public String toString() {
        return "the lock configuration of datasource '" + dataSource + "'";
    }
}
