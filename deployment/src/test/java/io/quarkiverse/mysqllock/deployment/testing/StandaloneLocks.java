package io.quarkiverse.mysqllock.deployment.testing;

import java.sql.Driver;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalDataSourceConfigurationSupplier;
import io.agroal.api.security.NamePrincipal;
import io.agroal.api.security.SimplePassword;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManagerFactory;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * A second lock manager on a pool of its own, built by the same factory as the bean: another "instance" of the
 * application inside the test JVM.
 */
public final class StandaloneLocks implements AutoCloseable {

    public final AgroalDataSource dataSource;
    public final MySqlLockManager locks;

    /**
     * How a standalone instance is configured; {@link #of(String)} gives the defaults: the shared test server, AUTO,
     * 8 shared connections, table {@code mysql_lock}, a 5 s ttl, a 10 s keepalive. Each setting returns a copy.
     * <p>
     * The ttl is long enough for a lease a test relies on to survive a busy machine: renewed every 1.7 s, it is lost
     * only when a renewal comes about 3 s late (with the former 2 s, about 1.1 s late: a forceRelease then showed up as
     * LEASE_EXPIRED rather than NOT_HELD, and leases that had to stay valid lapsed). A test whose subject is a lease's
     * expiry sets a short ttl of its own. Not longer: a lease whose renewals stop without the test's doing (a failover
     * leaves them nowhere to go, in ReplicationTopologyTest) must still be taken over within a 10 s wait.
     */
    public static final class Settings {
        private TestDatabase db = TestDatabase.shared();
        private String id;
        private MySqlLockRuntimeConfig.Mode mode = MySqlLockRuntimeConfig.Mode.AUTO;
        private Optional<Boolean> replication = Optional.empty();
        private int sharedConnections = 8;
        private String table = "mysql_lock";
        private Duration ttl = Duration.ofSeconds(5);
        private Duration keepalive = Duration.ofSeconds(10);
        private Duration statementTimeout = Duration.ofSeconds(10);
        private Duration maxClockSkew = Duration.ofMinutes(15);
        private LockMetrics metrics = LockMetrics.NONE;
        private Class<? extends Driver> driver;
        private int poolSize;
        private boolean instantLeaderHandOver;
        private boolean fencedCommit;

        private Settings(String id) {
            this.id = id;
        }

        public static Settings of(String id) {
            return new Settings(id);
        }

        /** A copy with one change. */
        private Settings with(Consumer<Settings> change) {
            Settings copy = new Settings(id);
            copy.db = db;
            copy.mode = mode;
            copy.replication = replication;
            copy.sharedConnections = sharedConnections;
            copy.table = table;
            copy.ttl = ttl;
            copy.keepalive = keepalive;
            copy.statementTimeout = statementTimeout;
            copy.maxClockSkew = maxClockSkew;
            copy.metrics = metrics;
            copy.driver = driver;
            copy.poolSize = poolSize;
            copy.instantLeaderHandOver = instantLeaderHandOver;
            copy.fencedCommit = fencedCommit;
            change.accept(copy);
            return copy;
        }

        public Settings statementTimeout(Duration limit) {
            return with(s -> s.statementTimeout = limit);
        }

        public Settings on(TestDatabase server) {
            return with(s -> s.db = server);
        }

        public Settings mode(MySqlLockRuntimeConfig.Mode engine) {
            return with(s -> s.mode = engine);
        }

        public Settings replication(boolean replicated) {
            return withReplication(Optional.of(replicated));
        }

        public Settings withReplication(Optional<Boolean> replicated) {
            return with(s -> s.replication = replicated);
        }

        public Settings sharedConnections(int shared) {
            return with(s -> s.sharedConnections = shared);
        }

        public Settings table(String lockTable) {
            return with(s -> s.table = lockTable);
        }

        public Settings ttl(Duration leaseTtl) {
            return with(s -> s.ttl = leaseTtl);
        }

        public Settings keepalive(Duration interval) {
            return with(s -> s.keepalive = interval);
        }

        public Settings maxClockSkew(Duration skew) {
            return with(s -> s.maxClockSkew = skew);
        }

        /** Where the engines report their metrics (by default nowhere). */
        public Settings metrics(LockMetrics sink) {
            return with(s -> s.metrics = sink);
        }

        /** The JDBC driver the pool connects with (by default the URL's). */
        public Settings driver(Class<? extends Driver> jdbcDriver) {
            return with(s -> s.driver = jdbcDriver);
        }

        /**
         * A pool of at most this many connections, which answers in 200 ms when it has none to give (by default, 20
         * connections and 5 s).
         */
        public Settings poolSize(int connections) {
            return with(s -> s.poolSize = connections);
        }

        /** {@code fenced-commit} (false by default): on NAMED, every grant then issues its fencing token at once. */
        public Settings fencedCommit(boolean fenced) {
            return with(s -> s.fencedCommit = fenced);
        }

        /** {@code named.instant-leader-hand-over} (false by default). */
        public Settings instantLeaderHandOver(boolean instant) {
            return with(s -> s.instantLeaderHandOver = instant);
        }

        public TestDatabase db() {
            return db;
        }

        public String id() {
            return id;
        }

        public MySqlLockRuntimeConfig.Mode mode() {
            return mode;
        }

        public Optional<Boolean> replication() {
            return replication;
        }

        public int sharedConnections() {
            return sharedConnections;
        }

        public String table() {
            return table;
        }

        public Duration ttl() {
            return ttl;
        }

        public Duration keepalive() {
            return keepalive;
        }

        public Duration statementTimeout() {
            return statementTimeout;
        }

        public Duration maxClockSkew() {
            return maxClockSkew;
        }

        public LockMetrics metrics() {
            return metrics;
        }

        public Class<? extends Driver> driver() {
            return driver;
        }

        public int poolSize() {
            return poolSize;
        }

        public boolean instantLeaderHandOver() {
            return instantLeaderHandOver;
        }

        public boolean fencedCommit() {
            return fencedCommit;
        }

        public StandaloneLocks start() {
            return new StandaloneLocks(this);
        }
    }

    public StandaloneLocks(String instanceId) {
        this(Settings.of(instanceId));
    }

    public StandaloneLocks(String instanceId, MySqlLockRuntimeConfig.Mode mode) {
        this(Settings.of(instanceId).mode(mode));
    }

    public StandaloneLocks(TestDatabase db, String instanceId, MySqlLockRuntimeConfig.Mode mode,
            Optional<Boolean> replication) {
        this(Settings.of(instanceId).on(db).mode(mode).withReplication(replication));
    }

    /** A NAMED manager with at most this many shared connections (0: one per thread holding locks). */
    public StandaloneLocks(String instanceId, int sharedConnections) {
        this(Settings.of(instanceId).mode(MySqlLockRuntimeConfig.Mode.NAMED).sharedConnections(sharedConnections));
    }

    private StandaloneLocks(Settings settings) {
        try {
            dataSource = AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                    .connectionPoolConfiguration(pool -> pool.maxSize(settings.poolSize() > 0 ? settings.poolSize() : 20)
                            .acquisitionTimeout(settings.poolSize() > 0 ? Duration.ofMillis(200) : Duration.ofSeconds(5))
                            .connectionFactoryConfiguration(factory -> {
                                factory.jdbcUrl(settings.db().jdbcUrl())
                                        .principal(new NamePrincipal(settings.db().user()))
                                        .credential(new SimplePassword(settings.db().password()));
                                if (settings.driver() != null) {
                                    factory.connectionProviderClass(settings.driver());
                                }
                                return factory;
                            })));
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        try {
            locks = MySqlLockManagerFactory.create(dataSource, "standalone", new Config(settings), null, settings.metrics());
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
    }

    @Override
    public void close() {
        locks.close();
        dataSource.close();
    }

    private record Config(Settings settings) implements MySqlLockRuntimeConfig {

        @Override
        public java.util.Map<String, DataSourceSettings> datasources() {
            return java.util.Map.of();
        }

        @Override
        public java.util.Map<String, JobSettings> jobs() {
            return java.util.Map.of();
        }

        @Override
        public Admin admin() {
            return () -> "mysql-lock-admin";
        }

        /** The defaults. */
        @Override
        public JobHistory jobHistory() {
            return new JobHistory() {
                @Override
                public int keepRuns() {
                    return 1000;
                }

                @Override
                public Duration keepFor() {
                    return Duration.ofDays(30);
                }
            };
        }

        @Override
        public Mode mode() {
            return settings.mode();
        }

        @Override
        public Optional<Boolean> replication() {
            return settings.replication();
        }

        @Override
        public Optional<String> namespace() {
            return Optional.empty();
        }

        @Override
        public Optional<String> instanceId() {
            return Optional.of(settings.id());
        }

        @Override
        public Optional<Duration> longHoldWarning() {
            return Optional.empty();
        }

        /** A test's instance ends its locks at once when closed, as a process that dies would. */
        @Override
        public Duration shutdownWait() {
            return Duration.ZERO;
        }

        @Override
        public Duration defaultWait() {
            return Duration.ZERO;
        }

        @Override
        public Duration connectionWait() {
            return Duration.ofSeconds(1);
        }

        @Override
        public Duration statementTimeout() {
            return settings.statementTimeout();
        }

        @Override
        public ServerFlavor serverFlavor() {
            return ServerFlavor.AUTO;
        }

        @Override
        public Named named() {
            return new Named() {
                @Override
                public Duration keepaliveInterval() {
                    return settings.keepalive();
                }

                @Override
                public int sharedConnections() {
                    return settings.sharedConnections();
                }

                @Override
                public boolean instantLeaderHandOver() {
                    return settings.instantLeaderHandOver();
                }
            };
        }

        @Override
        public Optional<String> table() {
            return Optional.of(settings.table());
        }

        @Override
        public Optional<Boolean> createTable() {
            return Optional.of(true);
        }

        @Override
        public boolean fencedCommit() {
            return settings.fencedCommit();
        }

        @Override
        public Lease lease() {
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
                    return settings.ttl();
                }

                @Override
                public Optional<Duration> renewInterval() {
                    return Optional.empty();
                }

                @Override
                public Duration maxClockSkew() {
                    return settings.maxClockSkew();
                }
            };
        }
    }
}
