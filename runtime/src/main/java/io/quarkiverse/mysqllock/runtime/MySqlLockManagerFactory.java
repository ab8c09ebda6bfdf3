package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.AgroalConnectionFactoryConfiguration;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkus.runtime.configuration.ConfigurationException;

/** Checks the configuration and the datasource, then builds the manager. Needs no database connection. */
public final class MySqlLockManagerFactory {

    private static final Logger LOG = Logger.getLogger(MySqlLockManagerFactory.class);

    private MySqlLockManagerFactory() {
    }

    public static MySqlLockManager create(AgroalDataSource dataSource, String dataSourceName, MySqlLockRuntimeConfig config) {
        requirePositive("quarkus.mysql-lock.named.keepalive-interval", config.named().keepaliveInterval());
        requireNotNegative("quarkus.mysql-lock.default-wait", config.defaultWait());
        requireNotNegative("quarkus.mysql-lock.connection-wait", config.connectionWait());
        LockNames names;
        LockTable table;
        try {
            names = LockNames.withNamespace(config.namespace().orElse(null));
            table = new LockTable(config.lease().table(), config.lease().createTable());
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }

        AgroalConnectionFactoryConfiguration factory = dataSource.getConfiguration().connectionPoolConfiguration()
                .connectionFactoryConfiguration();
        JdbcUrlPolicy.namedLockProblem(factory.jdbcUrl(), factory.jdbcProperties()).ifPresent(problem -> {
            throw new ConfigurationException("quarkus-mysql-lock cannot hold named locks on datasource '"
                    + dataSourceName + "': " + problem + ". Point quarkus.mysql-lock.datasource at a datasource with a"
                    + " single-host URL of the primary server.");
        });

        String identity = HolderIdentity.of(config.instanceId().orElse(null));
        ConnectionSource connections = new ConnectionSource(dataSource, dataSourceName, config.connectionWait());
        NamedLockEngine engine = new NamedLockEngine(connections, table, identity, config.serverFlavor(),
                config.named().keepaliveInterval());
        LOG.infof("Distributed locks: NAMED engine (GET_LOCK) on datasource '%s' as %s", dataSourceName, identity);
        return new MySqlLockManager(engine, names, config.defaultWait());
    }

    private static void requirePositive(String property, Duration value) {
        if (value.isZero() || value.isNegative()) {
            throw new ConfigurationException(property + "=" + value + " must be positive");
        }
    }

    private static void requireNotNegative(String property, Duration value) {
        if (value.isNegative()) {
            throw new ConfigurationException(property + "=" + value + " must not be negative");
        }
    }
}
