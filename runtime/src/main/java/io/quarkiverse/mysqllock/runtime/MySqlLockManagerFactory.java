package io.quarkiverse.mysqllock.runtime;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionManager;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.AgroalConnectionFactoryConfiguration;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockTimings;
import io.quarkiverse.mysqllock.runtime.features.TableRecords;
import io.quarkiverse.mysqllock.runtime.features.TransactionScopedLocks;
import io.quarkiverse.mysqllock.runtime.fence.MemoryFenceGuard;
import io.quarkiverse.mysqllock.runtime.fence.TableFenceGuard;
import io.quarkiverse.mysqllock.runtime.fleet.EngineAgreement;
import io.quarkiverse.mysqllock.runtime.fleet.SelectingEngine;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.DataSourceNames;
import io.quarkiverse.mysqllock.runtime.jdbc.JdbcUrlPolicy;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jobs.HistoryRetention;
import io.quarkiverse.mysqllock.runtime.lease.LeaseEngine;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.runtime.metrics.GuardedMetrics;
import io.quarkiverse.mysqllock.runtime.metrics.LockSpans;
import io.quarkiverse.mysqllock.runtime.metrics.MeteredEngine;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.transaction.FencedCommits;
import io.quarkiverse.mysqllock.runtime.transaction.TransactionBoundEngine;
import io.quarkiverse.mysqllock.runtime.transaction.Transactions;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ArcContainer;
import io.quarkus.arc.InjectableContext;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.configuration.ConfigurationException;

/** Checks the configuration and the datasource, then builds the manager. Needs no database connection. */
public final class MySqlLockManagerFactory {

    private static final Logger LOG = Logger.getLogger(MySqlLockManagerFactory.class);

    private MySqlLockManagerFactory() {
    }

    /** The manager in use for a datasource ({@code "<default>"} for the default one), if one is. */
    public static Optional<MySqlLockManager> created(String dataSourceName) {
        return created().stream().filter(manager -> manager.dataSourceName().equals(dataSourceName)).findFirst();
    }

    /**
     * The lock managers in use: the lock datasource's, and those of other datasources once injected somewhere. A
     * datasource nobody takes locks from is left alone (creating its manager to look at it would make its outage ours).
     */
    public static List<MySqlLockManager> created() {
        ArcContainer arc = Arc.container();
        InjectableContext singletons = arc.getActiveContext(Singleton.class);
        List<MySqlLockManager> managers = new ArrayList<>();
        for (Bean<?> bean : arc.beanManager().getBeans(MySqlLockManager.class, Any.Literal.INSTANCE)) {
            if (singletons.get(bean) instanceof MySqlLockManager manager) {
                managers.add(manager);
            }
        }
        return managers;
    }

    public static MySqlLockManager create(AgroalDataSource dataSource, String dataSourceName, MySqlLockRuntimeConfig config) {
        return create(dataSource, dataSourceName, config, null);
    }

    public static MySqlLockManager create(AgroalDataSource dataSource, String dataSourceName, MySqlLockRuntimeConfig config,
            TransactionManager transactions) {
        return create(dataSource, dataSourceName, config, transactions, LockMetrics.NONE);
    }

    /**
     * @param transactions the JTA transaction manager, or null where there is none (then no transaction-scoped locks)
     * @param reported where the engines report, {@link LockMetrics#NONE} for nowhere; its failures are logged, never
     *        thrown into the engines
     */
    public static MySqlLockManager create(AgroalDataSource dataSource, String dataSourceName, MySqlLockRuntimeConfig config,
            TransactionManager transactions, LockMetrics reported) {
        return create(dataSource, dataSourceName, config, transactions, reported, LockSpans.NONE);
    }

    /**
     * @param dataSource the datasource the locks live in; null only for in-memory locks,
     *        which uses none
     * @param spans where acquisitions and holds go as trace spans ({@code quarkus-opentelemetry}), or NONE
     */
    public static MySqlLockManager create(AgroalDataSource dataSource, String dataSourceName, MySqlLockRuntimeConfig config,
            TransactionManager transactions, LockMetrics reported, LockSpans spans) {
        return createFor(dataSource, dataSourceName, DataSourceLockConfig.of(config, dataSourceName), transactions,
                reported, spans, false);
    }

    /**
     * The manager of an application built for in-memory locks ({@code quarkus.mysql-lock.in-memory}): the JVM's memory,
     * no datasource, whatever engine {@code mode} names; the configuration is checked as for any manager.
     */
    public static MySqlLockManager createInMemory(String dataSourceName, MySqlLockRuntimeConfig config,
            TransactionManager transactions, LockMetrics reported, LockSpans spans) {
        return createFor(null, dataSourceName, DataSourceLockConfig.of(config, dataSourceName), transactions, reported,
                spans, true);
    }

    /** @param config the datasource's own configuration ({@link DataSourceLockConfig}) */
    private static MySqlLockManager createFor(AgroalDataSource dataSource, String dataSourceName,
            MySqlLockRuntimeConfig config, TransactionManager transactions, LockMetrics reported, LockSpans spans,
            boolean inMemory) {
        LockMetrics metrics = GuardedMetrics.of(reported);
        config.longHoldWarning().ifPresent(threshold -> requirePositive(key(config, "long-hold-warning"), threshold));
        if (config.shutdownWait().isNegative()) {
            throw new ConfigurationException("quarkus.mysql-lock.shutdown-wait is " + config.shutdownWait()
                    + ": 0s (release every lock at once) or longer");
        }
        HistoryRetention retention;
        try {
            retention = new HistoryRetention(config.jobHistory().keepRuns(), config.jobHistory().keepFor());
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }
        MySqlLockManager manager = build(dataSource, dataSourceName, config, transactions, metrics, spans, inMemory);
        manager.retainJobHistory(retention);
        manager.waitAtShutdown(config.shutdownWait());
        manager.measure(metrics);
        config.longHoldWarning().ifPresent(manager::warnOfHoldsLongerThan);
        return manager;
    }

    private static MySqlLockManager build(AgroalDataSource dataSource, String dataSourceName,
            MySqlLockRuntimeConfig config, TransactionManager transactions, LockMetrics metrics, LockSpans spans,
            boolean inMemory) {
        if (config.named().sharedConnections() < 0) {
            throw new ConfigurationException(key(config, "named.shared-connections") + "="
                    + config.named().sharedConnections() + " must be 0 (no shared connections) or more");
        }
        requireNotNegative(key(config, "default-wait"), config.defaultWait());
        requireNotNegative(key(config, "connection-wait"), config.connectionWait());
        requirePositive(key(config, "statement-timeout"), config.statementTimeout());
        LockNames names;
        LockTable table;
        try {
            names = LockNames.withNamespace(config.namespace().orElse(null));
            table = new LockTable(movedSetting(config.table(), config.lease().table(), "table", "mysql_lock"),
                    movedSetting(config.createTable(), config.lease().createTable(), "create-table", true));
        } catch (IllegalArgumentException e) {
            // named under the key the value came from: the datasource's own, where it set one
            throw new ConfigurationException(e.getMessage()
                    .replace("quarkus.mysql-lock.namespace=", key(config, "namespace") + "=")
                    .replace("quarkus.mysql-lock.table=", key(config, "table") + "="), e);
        }

        LockTimings timings = LockTimings.of(config.named().keepaliveInterval(), config.lease().ttl(),
                config.lease().renewInterval(), config.lease().maxClockSkew(), relative -> key(config, relative));

        if (inMemory || config.mode() == Mode.IN_MEMORY) {
            return inMemory(dataSourceName, config, metrics, spans, names, transactions);
        }
        requireLargeEnoughPool(dataSource, dataSourceName, config.mode());
        AgroalConnectionFactoryConfiguration factory = dataSource.getConfiguration().connectionPoolConfiguration()
                .connectionFactoryConfiguration();
        Optional<String> urlProblem = JdbcUrlPolicy.namedLockProblem(factory.jdbcUrl(), factory.jdbcProperties(),
                dataSourceName);
        if (config.mode() == Mode.NAMED && urlProblem.isPresent()) {
            throw new ConfigurationException("quarkus-mysql-lock cannot hold named locks on datasource '"
                    + dataSourceName + "': " + urlProblem.get() + ". Point quarkus.mysql-lock.datasource at a datasource"
                    + " with a single-host URL of the primary server, or set " + key(config, "mode") + " to lease (or auto).");
        }

        String identity = holderIdentity(config.instanceId().orElse(null));
        ConnectionSource connections = new ConnectionSource(dataSource, dataSourceName, config.connectionWait(),
                config.statementTimeout(), flavor(config.serverFlavor()), transactions);
        Optional<LockMode> configuredMode = switch (config.mode()) {
            case AUTO -> Optional.empty();
            case NAMED -> Optional.of(LockMode.NAMED);
            case LEASE -> Optional.of(LockMode.LEASE);
            case IN_MEMORY -> throw new IllegalStateException("in-memory is built above");
        };
        SelectingEngine engine = new SelectingEngine(configuredMode, config.replication(), urlProblem, connections, table,
                new EngineAgreement(table.name(), config.namespace().orElse(null), identity, timings,
                        config.named().instantLeaderHandOver()),
                identity, timings,
                membership -> new NamedLockEngine(connections, table, identity, timings,
                        config.named().sharedConnections(), metrics, membership, config.fencedCommit()),
                membership -> new LeaseEngine(connections, table, identity, timings, metrics, membership),
                chosen -> metrics.engineChosen(chosen.mode(), () -> chosen.held().size(),
                        () -> chosen instanceof NamedLockEngine named ? named.pinnedConnections() : 0));
        engine.chooseIfPossible();
        MySqlLockManager manager = new MySqlLockManager(TransactionBoundEngine.of(MeteredEngine.of(engine, metrics,
                CdiEvents.lockEvents(), spans, identity, engine::chosenMode), Transactions.of(transactions),
                FencedCommits.inDatabase(dataSource, table.name()), config.fencedCommit()),
                names, config.defaultWait(),
                new TableRecords(connections, table, timings.maxClockSkewMicros(), identity),
                new TransactionScopedLocks(dataSource, connections, table, transactions), Transactions.of(transactions));
        manager.confirmLeadersWithin(timings.leaderWindow(), config.named().instantLeaderHandOver());
        manager.guardFencesWith(new TableFenceGuard(dataSource, connections, table.name(),
                lock -> names.recordRow("seen", lock)));
        return manager;
    }

    /**
     * The in-memory manager: no datasource, the JVM's memory; refused when the
     * application does not run for tests or in dev mode (the build refuses it too, but a runtime value could set it).
     */
    private static MySqlLockManager inMemory(String dataSourceName, MySqlLockRuntimeConfig config, LockMetrics metrics,
            LockSpans spans, LockNames names, TransactionManager transactions) {
        if (!LaunchMode.current().isDevOrTest()) {
            throw new ConfigurationException(IN_MEMORY_REFUSED);
        }
        String identity = holderIdentity(config.instanceId().orElse(null));
        InMemoryEngine engine = new InMemoryEngine(dataSourceName, identity, metrics);
        MySqlLockManager manager = new MySqlLockManager(TransactionBoundEngine.of(MeteredEngine.of(engine, metrics,
                CdiEvents.lockEvents(), spans, identity, () -> LockMode.LEASE), Transactions.of(transactions),
                FencedCommits.inMemory(engine::newestFence), config.fencedCommit()), names, config.defaultWait(), null,
                null, Transactions.of(transactions));
        manager.guardFencesWith(new MemoryFenceGuard());
        return manager;
    }

    /** Why {@code in-memory} is refused outside tests and dev mode. */
    public static final String IN_MEMORY_REFUSED = "In-memory locks (quarkus.mysql-lock.in-memory=true, or the deprecated"
            + " quarkus.mysql-lock.mode=in-memory) keep locks in one JVM's memory: they are for tests and dev mode only,"
            + " never a production build. Set it for those profiles only (%test.quarkus.mysql-lock.in-memory=true), and"
            + " leave it unset otherwise.";

    /**
     * The fewest connections the locks need of a pool: NAMED keeps one for housekeeping and needs one for a lock; LEASE
     * (and AUTO, which may choose it) also keeps one for its batched takes and releases while it takes and gives back.
     */
    static final int MIN_POOL_SIZE_NAMED = 2;
    static final int MIN_POOL_SIZE = 3;

    /**
     * Refuses a pool too small to hold a lock at all: the engines keep one connection for their housekeeping (the
     * fleet's membership, lease renewals), so that an application using every other connection costs no held lock.
     */
    private static void requireLargeEnoughPool(AgroalDataSource dataSource, String dataSourceName, Mode mode) {
        int maxSize = dataSource.getConfiguration().connectionPoolConfiguration().maxSize();
        int least = mode == Mode.NAMED ? MIN_POOL_SIZE_NAMED : MIN_POOL_SIZE;
        if (maxSize < least) {
            throw new ConfigurationException(DataSourceNames.property(dataSourceName, "jdbc.max-size") + "=" + maxSize
                    + " is too small for quarkus-mysql-lock: it keeps one connection of the pool for its housekeeping (the"
                    + " fleet's membership, lease renewals)" + (mode == Mode.NAMED ? ""
                            : ", and the LEASE engine one for its batched takes and releases")
                    + ", and needs at least one more for the locks. Set it to at least " + least
                    + ", plus the connections the application itself uses at once (the guide's Failure semantics page"
                    + " says how to size the pool)");
        }
    }

    private static ServerVersion.Flavor flavor(MySqlLockRuntimeConfig.ServerFlavor configured) {
        return switch (configured) {
            case AUTO -> ServerVersion.Flavor.AUTO;
            case MYSQL -> ServerVersion.Flavor.MYSQL;
            case MARIADB -> ServerVersion.Flavor.MARIADB;
        };
    }

    /**
     * A setting moved out of {@code quarkus.mysql-lock.lease.*} to the top level (both engines use it): the new key, else
     * the deprecated one (with a warning), else the default; both keys set to different values fail the start.
     */
    static <T> T movedSetting(Optional<T> current, Optional<T> deprecated, String key, T defaultValue) {
        if (deprecated.isEmpty()) {
            return current.orElse(defaultValue);
        }
        if (current.isPresent() && !current.get().equals(deprecated.get())) {
            throw new ConfigurationException("quarkus.mysql-lock." + key + "=" + current.get() + " and the deprecated"
                    + " quarkus.mysql-lock.lease." + key + "=" + deprecated.get() + " disagree: remove the deprecated one");
        }
        LOG.warnf("quarkus.mysql-lock.lease.%s is deprecated: set quarkus.mysql-lock.%s instead (both engines use it)",
                key, key);
        return deprecated.get();
    }

    private static String key(MySqlLockRuntimeConfig config, String relative) {
        return DataSourceLockConfig.key(config, relative);
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

    /**
     * The longest holder identity: a lease's owner token adds its acquisition's random part and its length (about 30
     * characters) and must fit the lock table's {@code owner VARCHAR(255)}; a server not in strict mode would cut it
     * short, and a cut length would tell watchers a shorter lease.
     */
    static final int MAX_IDENTITY_LENGTH = 200;

    /**
     * {@code <host>/<pid>/<instance-id>}: unique per process, readable by an operator.
     *
     * @param instanceId the configured instance id, or null for a random one
     */
    static String holderIdentity(String instanceId) {
        String id = instanceId != null && !instanceId.isBlank() ? instanceId.strip()
                : UUID.randomUUID().toString().substring(0, 8);
        String identity = hostName() + "/" + ProcessHandle.current().pid() + "/" + id;
        return identity.length() <= MAX_IDENTITY_LENGTH ? identity : identity.substring(0, MAX_IDENTITY_LENGTH);
    }

    private static String hostName() {
        String host = System.getenv("HOSTNAME");
        if (host != null && !host.isBlank()) {
            return host.strip();
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "unknown-host";
        }
    }
}
