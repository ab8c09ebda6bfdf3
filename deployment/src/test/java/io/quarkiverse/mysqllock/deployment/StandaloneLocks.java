package io.quarkiverse.mysqllock.deployment;

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
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * A second lock manager on a pool of its own, built by the same factory as the bean: another "instance" of the
 * application inside the test JVM.
 */
final class StandaloneLocks implements AutoCloseable {

    final AgroalDataSource dataSource;
    final MySqlLockManager locks;

    StandaloneLocks(String instanceId) {
        this(instanceId, MySqlLockRuntimeConfig.Mode.AUTO);
    }

    StandaloneLocks(String instanceId, MySqlLockRuntimeConfig.Mode mode) {
        this(TestDatabase.shared(), instanceId, mode, Optional.empty());
    }

    StandaloneLocks(TestDatabase db, String instanceId, MySqlLockRuntimeConfig.Mode mode, Optional<Boolean> replication) {
        this(db, instanceId, mode, replication, 8);
    }

    /** A NAMED manager with at most this many shared connections (0: one per thread holding locks). */
    StandaloneLocks(String instanceId, int sharedConnections) {
        this(TestDatabase.shared(), instanceId, MySqlLockRuntimeConfig.Mode.NAMED, Optional.empty(), sharedConnections);
    }

    private StandaloneLocks(TestDatabase db, String instanceId, MySqlLockRuntimeConfig.Mode mode,
            Optional<Boolean> replication, int sharedConnections) {
        try {
            dataSource = AgroalDataSource.from(new AgroalDataSourceConfigurationSupplier()
                    .connectionPoolConfiguration(pool -> pool.maxSize(20).acquisitionTimeout(Duration.ofSeconds(5))
                            .connectionFactoryConfiguration(factory -> factory.jdbcUrl(db.jdbcUrl())
                                    .principal(new NamePrincipal(db.user()))
                                    .credential(new SimplePassword(db.password())))));
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        try {
            locks = MySqlLockManagerFactory.create(dataSource, "standalone", new Config(instanceId, mode, replication, sharedConnections));
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

    private record Config(String id, Mode mode, Optional<Boolean> replication, int shared)
            implements MySqlLockRuntimeConfig {

        @Override
        public Optional<String> namespace() {
            return Optional.empty();
        }

        @Override
        public Optional<String> instanceId() {
            return Optional.of(id);
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
        public ServerFlavor serverFlavor() {
            return ServerFlavor.AUTO;
        }

        @Override
        public Named named() {
            return new Named() {
                @Override
                public Duration keepaliveInterval() {
                    return Duration.ofSeconds(10);
                }

                @Override
                public int sharedConnections() {
                    return shared;
                }
            };
        }

        @Override
        public Lease lease() {
            return new Lease() {
                @Override
                public String table() {
                    return "mysql_lock";
                }

                @Override
                public boolean createTable() {
                    return true;
                }

                @Override
                public Duration ttl() {
                    return Duration.ofSeconds(2);
                }

                @Override
                public Optional<Duration> renewInterval() {
                    return Optional.empty();
                }
            };
        }
    }
}
