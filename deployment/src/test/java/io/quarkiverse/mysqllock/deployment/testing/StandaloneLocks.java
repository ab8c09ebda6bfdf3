package io.quarkiverse.mysqllock.deployment.testing;

import java.sql.Driver;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

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
     * 8 shared connections, table {@code mysql_lock}, a 2 s ttl, a 10 s keepalive.
     */
    public record Settings(TestDatabase db, String id, MySqlLockRuntimeConfig.Mode mode, Optional<Boolean> replication,
            int sharedConnections, String table, Duration ttl, Duration keepalive, Duration statementTimeout,
            Duration maxClockSkew, LockMetrics metrics, Class<? extends Driver> driver, int poolSize,
            boolean instantLeaderHandOver) {

        public static Settings of(String id) {
            return new Settings(TestDatabase.shared(), id, MySqlLockRuntimeConfig.Mode.AUTO, Optional.empty(), 8,
                    "mysql_lock", Duration.ofSeconds(2), Duration.ofSeconds(10), Duration.ofSeconds(10),
                    Duration.ofMillis(200), LockMetrics.NONE, null, 0, false);
        }

        public Settings statementTimeout(Duration limit) {
            return new Settings(db, id, mode, replication, sharedConnections, table, ttl, keepalive, limit, maxClockSkew,
                    metrics, driver, poolSize, instantLeaderHandOver);
        }

        public Settings on(TestDatabase server) {
            return new Settings(server, id, mode, replication, sharedConnections, table, ttl, keepalive, statementTimeout,
                    maxClockSkew, metrics, driver, poolSize, instantLeaderHandOver);
        }

        public Settings mode(MySqlLockRuntimeConfig.Mode engine) {
            return new Settings(db, id, engine, replication, sharedConnections, table, ttl, keepalive, statementTimeout,
                    maxClockSkew, metrics, driver, poolSize, instantLeaderHandOver);
        }

        public Settings replication(boolean replicated) {
            return withReplication(Optional.of(replicated));
        }

        public Settings withReplication(Optional<Boolean> replicated) {
            return new Settings(db, id, mode, replicated, sharedConnections, table, ttl, keepalive, statementTimeout,
                    maxClockSkew, metrics, driver, poolSize, instantLeaderHandOver);
        }

        public Settings sharedConnections(int shared) {
            return new Settings(db, id, mode, replication, shared, table, ttl, keepalive, statementTimeout, maxClockSkew,
                    metrics, driver, poolSize, instantLeaderHandOver);
        }

        public Settings table(String lockTable) {
            return new Settings(db, id, mode, replication, sharedConnections, lockTable, ttl, keepalive, statementTimeout,
                    maxClockSkew, metrics, driver, poolSize, instantLeaderHandOver);
        }

        public Settings ttl(Duration leaseTtl) {
            return new Settings(db, id, mode, replication, sharedConnections, table, leaseTtl, keepalive, statementTimeout,
                    maxClockSkew, metrics, driver, poolSize, instantLeaderHandOver);
        }

        public Settings keepalive(Duration interval) {
            return new Settings(db, id, mode, replication, sharedConnections, table, ttl, interval, statementTimeout,
                    maxClockSkew, metrics, driver, poolSize, instantLeaderHandOver);
        }

        public Settings maxClockSkew(Duration skew) {
            return new Settings(db, id, mode, replication, sharedConnections, table, ttl, keepalive, statementTimeout,
                    skew, metrics, driver, poolSize, instantLeaderHandOver);
        }

        /** Where the engines report their metrics (by default nowhere). */
        public Settings metrics(LockMetrics sink) {
            return new Settings(db, id, mode, replication, sharedConnections, table, ttl, keepalive, statementTimeout,
                    maxClockSkew, sink, driver, poolSize, instantLeaderHandOver);
        }

        /** The JDBC driver the pool connects with (by default the URL's). */
        public Settings driver(Class<? extends Driver> jdbcDriver) {
            return new Settings(db, id, mode, replication, sharedConnections, table, ttl, keepalive, statementTimeout,
                    maxClockSkew, metrics, jdbcDriver, poolSize, instantLeaderHandOver);
        }

        /**
         * A pool of at most this many connections, which answers in 200 ms when it has none to give (by default, 20
         * connections and 5 s).
         */
        public Settings poolSize(int connections) {
            return new Settings(db, id, mode, replication, sharedConnections, table, ttl, keepalive, statementTimeout,
                    maxClockSkew, metrics, driver, connections, instantLeaderHandOver);
        }

        /** {@code named.instant-leader-hand-over} (false by default). */
        public Settings instantLeaderHandOver(boolean instant) {
            return new Settings(db, id, mode, replication, sharedConnections, table, ttl, keepalive, statementTimeout,
                    maxClockSkew, metrics, driver, poolSize, instant);
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
        public Lease lease() {
            return new Lease() {
                @Override
                public String table() {
                    return settings.table();
                }

                @Override
                public boolean createTable() {
                    return true;
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
                public Optional<Duration> maxClockSkew() {
                    return Optional.of(settings.maxClockSkew());
                }
            };
        }
    }
}
