package io.quarkiverse.mysqllock.deployment;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

import jakarta.enterprise.inject.Default;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionManager;

import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.ClassType;
import org.jboss.jandex.DotName;
import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockBuildTimeConfig;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManagerFactory;
import io.quarkiverse.mysqllock.runtime.MySqlLockRecorder;
import io.quarkiverse.mysqllock.runtime.ShutdownWait;
import io.quarkiverse.mysqllock.runtime.engine.HoldLeaks;
import io.quarkiverse.mysqllock.runtime.health.MySqlLockHealthCheck;
import io.quarkiverse.mysqllock.runtime.health.MySqlLockJobsHealthCheck;
import io.quarkiverse.mysqllock.runtime.jdbc.DataSourceNames;
import io.quarkiverse.mysqllock.runtime.table.AuditTable;
import io.quarkiverse.mysqllock.runtime.table.JobTable;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.RunTable;
import io.quarkiverse.mysqllock.runtime.transaction.TransactionBegins;
import io.quarkus.agroal.DataSource;
import io.quarkus.agroal.spi.JdbcDataSourceBuildItem;
import io.quarkus.arc.BeanDestroyer;
import io.quarkus.arc.SyntheticCreationalContext;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.SyntheticBeanBuildItem;
import io.quarkus.arc.deployment.UnremovableBeanBuildItem;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;
import io.quarkus.deployment.builditem.FeatureBuildItem;
import io.quarkus.deployment.builditem.LaunchModeBuildItem;
import io.quarkus.deployment.builditem.nativeimage.NativeImageResourceBuildItem;
import io.quarkus.deployment.builditem.nativeimage.RuntimeInitializedClassBuildItem;
import io.quarkus.deployment.metrics.MetricsCapabilityBuildItem;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.runtime.metrics.MetricsFactory;
import io.quarkus.smallrye.health.deployment.spi.HealthBuildItem;

class MySqlLockProcessor {

    private static final Logger LOG = Logger.getLogger(MySqlLockProcessor.class);

    static final String FEATURE = "mysql-lock";

    @BuildStep
    FeatureBuildItem feature() {
        return new FeatureBuildItem(FEATURE);
    }

    /** The wait for work in progress at the start of the shutdown, before its locks end with the datasources. */
    @BuildStep
    AdditionalBeanBuildItem shutdownWait() {
        return AdditionalBeanBuildItem.unremovableOf(ShutdownWait.class);
    }

    /** A transaction begun while fenced locks are held checks their fences before it commits. */
    @BuildStep
    AdditionalBeanBuildItem transactionBegins() {
        return AdditionalBeanBuildItem.unremovableOf(TransactionBegins.class);
    }

    /** Ignored unless quarkus-smallrye-health is present. */
    @BuildStep
    HealthBuildItem health(MySqlLockBuildTimeConfig config) {
        return new HealthBuildItem(MySqlLockHealthCheck.class.getName(), config.health().enabled());
    }

    /** The silence alerts of scheduled jobs: a wellness check, with the readiness check. */
    @BuildStep
    HealthBuildItem jobsHealth(MySqlLockBuildTimeConfig config) {
        return new HealthBuildItem(MySqlLockJobsHealthCheck.class.getName(), config.health().enabled());
    }

    /**
     * The lock table's DDL is read at run time, also in a native image; with the Liquibase changelog, so that an
     * application's migrations can include it there too.
     */
    @BuildStep
    NativeImageResourceBuildItem ddlResource() {
        return new NativeImageResourceBuildItem(LockTable.DDL_RESOURCE, JobTable.DDL_RESOURCE, RunTable.DDL_RESOURCE,
                AuditTable.DDL_RESOURCE, LockTable.LIQUIBASE_CHANGELOG);
    }

    /**
     * The leak finder's cleaner and release threads belong to the running application: initialised at build time, a
     * native image would hold a cleaner with no thread, and a leaked hold would never be released.
     */
    @BuildStep
    RuntimeInitializedClassBuildItem leakFinderAtRunTime() {
        return new RuntimeInitializedClassBuildItem(HoldLeaks.class.getName());
    }

    /**
     * Whether the application is built for in-memory locks ({@code quarkus.mysql-lock.in-memory}, or the deprecated
     * {@code quarkus.mysql-lock.mode=in-memory} seen when it is built): only for tests and dev mode; a production build
     * with it fails.
     */
    static boolean inMemory(MySqlLockBuildTimeConfig config, LaunchModeBuildItem launchMode) {
        String mode = ConfigProvider.getConfig().getOptionalValue("quarkus.mysql-lock.mode", String.class).orElse("auto");
        boolean deprecatedMode = mode.strip().toLowerCase(Locale.ROOT).replace('_', '-').equals("in-memory");
        boolean inMemory = config.inMemory() || deprecatedMode;
        if (inMemory && !launchMode.getLaunchMode().isDevOrTest()) {
            throw new ConfigurationException(MySqlLockManagerFactory.IN_MEMORY_REFUSED);
        }
        if (deprecatedMode && !config.inMemory()) {
            LOG.warn("quarkus.mysql-lock.mode=in-memory is deprecated: set quarkus.mysql-lock.in-memory=true (for the"
                    + " test and dev profiles: %test.quarkus.mysql-lock.in-memory=true), which is read when the"
                    + " application is built, as in-memory locks are");
        }
        return inMemory;
    }

    /** The datasource the locks live in, checked against the configured datasources. */
    @BuildStep
    LockDataSourceBuildItem lockDataSource(MySqlLockBuildTimeConfig config, List<JdbcDataSourceBuildItem> dataSources,
            LaunchModeBuildItem launchMode) {
        String wanted = config.datasource().orElse(DataSourceNames.DEFAULT);
        if (inMemory(config, launchMode)) {
            return new LockDataSourceBuildItem(wanted, true); // no database: none is needed
        }
        Set<String> known = new TreeSet<>();
        for (JdbcDataSourceBuildItem dataSource : dataSources) {
            known.add(dataSource.getName());
            if (dataSource.getName().equals(wanted)) {
                if (!LockDataSourceBuildItem.SUPPORTED_DB_KINDS.contains(dataSource.getDbKind())) {
                    throw new ConfigurationException("quarkus-mysql-lock needs a MySQL or MariaDB datasource, but"
                            + " datasource '" + wanted + "' has db-kind '" + dataSource.getDbKind() + "'. Point"
                            + " quarkus.mysql-lock.datasource at a datasource with db-kind mysql or mariadb.");
                }
                return new LockDataSourceBuildItem(wanted, false);
            }
        }
        String hint = DataSourceNames.isDefault(wanted)
                ? "No default datasource is configured: add the driver of your database (quarkus-jdbc-mysql or"
                        + " quarkus-jdbc-mariadb) and set quarkus.datasource.db-kind (mysql or mariadb) and its JDBC URL,"
                        + " or name a configured datasource with quarkus.mysql-lock.datasource."
                : "quarkus.mysql-lock.datasource='" + wanted + "' names no configured JDBC datasource. Configure it"
                        + " (quarkus.datasource.\"" + wanted + "\".db-kind=mysql) or fix the name.";
        throw new ConfigurationException(hint + " Configured JDBC datasources: "
                + (known.isEmpty() ? "none" : String.join(", ", known)) + ".");
    }

    /**
     * A {@code LockManager} for every MySQL or MariaDB datasource, each with its own engine decision: the lock
     * datasource's ({@code quarkus.mysql-lock.datasource}) is the {@code @Default} one and starts with the application;
     * another datasource's, {@code @DataSource("name")}, is created when first injected.
     */
    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    void lockManagers(LockDataSourceBuildItem lockDataSource, List<JdbcDataSourceBuildItem> dataSources,
            LaunchModeBuildItem launchMode, MySqlLockRecorder recorder, MySqlLockBuildTimeConfig config,
            Optional<MetricsCapabilityBuildItem> metricsCapability, Capabilities capabilities,
            BuildProducer<SyntheticBeanBuildItem> beans, BuildProducer<UnremovableBeanBuildItem> unremovable) {
        boolean micrometer = config.metrics().enabled() && metricsCapability
                .map(capability -> capability.metricsSupported(MetricsFactory.MICROMETER)).orElse(false);
        // spans of acquisitions and holds when the application has quarkus-opentelemetry's tracer
        boolean tracing = capabilities.isPresent(Capability.OPENTELEMETRY_TRACER);
        if (tracing) {
            unremovable.produce(UnremovableBeanBuildItem.beanTypes(DotName.createSimple("io.opentelemetry.api.OpenTelemetry")));
        }
        // quarkus.mysql-lock."name".* must name a datasource that has locks in a database build (in-memory too: the
        // settings are the same file's)
        recorder.checkDataSourceSettings(
                new TreeSet<>(LockDataSourceBuildItem.managed(lockDataSource.name(), dataSources, false)));
        if (lockDataSource.inMemory()) {
            // the lock datasource's manager only, with no datasource injected: it needs none; @DataSource is a
            // qualifier only where Agroal has datasources
            beans.produce(lockManagerBean(lockDataSource.name(), true, !dataSources.isEmpty(),
                    recorder.inMemoryLockManager(lockDataSource.name(), micrometer, tracing))
                    .addInjectionPoint(ClassType.create(DotName.createSimple(TransactionManager.class))).done());
            return;
        }
        Set<String> managed = LockDataSourceBuildItem.managed(lockDataSource.name(), dataSources, false);
        for (JdbcDataSourceBuildItem dataSource : dataSources) {
            String name = dataSource.getName();
            boolean main = name.equals(lockDataSource.name());
            if (!managed.contains(name)) {
                continue;
            }
            AnnotationInstance dataSourceQualifier = DataSourceNames.isDefault(name)
                    ? AnnotationInstance.builder(Default.class).build()
                    : AnnotationInstance.builder(DataSource.class).add("value", name).build();
            beans.produce(lockManagerBean(name, main, true, recorder.lockManager(name, micrometer, tracing))
                    .addInjectionPoint(ClassType.create(DotName.createSimple(AgroalDataSource.class)), dataSourceQualifier)
                    .addInjectionPoint(ClassType.create(DotName.createSimple(TransactionManager.class)))
                    .done());
        }
    }

    /**
     * A {@code LockManager} bean: the lock datasource's ({@code main}) is the {@code @Default} one and starts with the
     * application; every one is qualified {@code @DataSource(name)} where that qualifier exists.
     */
    private static SyntheticBeanBuildItem.ExtendedBeanConfigurator lockManagerBean(String name, boolean main,
            boolean dataSourceQualifier,
            Function<SyntheticCreationalContext<MySqlLockManager>, MySqlLockManager> creator) {
        SyntheticBeanBuildItem.ExtendedBeanConfigurator bean = SyntheticBeanBuildItem
                .configure(MySqlLockManager.class)
                .types(LockManager.class, MySqlLockManager.class)
                .scope(Singleton.class)
                .unremovable()
                .setRuntimeInit()
                .createWith(creator)
                .destroyer(BeanDestroyer.AutoCloseableDestroyer.class);
        if (main) {
            bean.startup().addQualifier(AnnotationInstance.builder(Default.class).build());
        }
        if (dataSourceQualifier) {
            bean.addQualifier(AnnotationInstance.builder(DataSource.class).add("value", name).build());
        }
        return bean;
    }
}
