package io.quarkiverse.mysqllock.runtime;

import java.util.Set;
import java.util.function.Function;

import jakarta.transaction.TransactionManager;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.metrics.LockSpans;
import io.quarkiverse.mysqllock.runtime.metrics.MicrometerLockMetrics;
import io.quarkiverse.mysqllock.runtime.tracing.OpenTelemetryLockSpans;
import io.quarkus.agroal.runtime.AgroalDataSourceUtil;
import io.quarkus.arc.SyntheticCreationalContext;
import io.quarkus.runtime.RuntimeValue;
import io.quarkus.runtime.annotations.Recorder;

@Recorder
public class MySqlLockRecorder {

    private static final Logger LOG = Logger.getLogger(MySqlLockRecorder.class);

    private final RuntimeValue<MySqlLockRuntimeConfig> config;

    public MySqlLockRecorder(RuntimeValue<MySqlLockRuntimeConfig> config) {
        this.config = config;
    }

    /** Fails the start when {@code quarkus.mysql-lock."name".*} names none of these datasources. */
    public void checkDataSourceSettings(Set<String> dataSources) {
        DataSourceLockConfig.checkNames(config.getValue(), dataSources);
    }

    /**
     * @param micrometer whether the application has Micrometer (and metrics are enabled): the metrics class is loaded only then
     * @param tracing whether the application has {@code quarkus-opentelemetry}: the tracing class is loaded only then
     */
    public Function<SyntheticCreationalContext<MySqlLockManager>, MySqlLockManager> lockManager(String dataSourceName,
            boolean micrometer, boolean tracing) {
        return context -> {
            AgroalDataSource dataSource = context.getInjectedReference(AgroalDataSource.class,
                    AgroalDataSourceUtil.qualifier(dataSourceName));
            return MySqlLockManagerFactory.create(dataSource, dataSourceName, config.getValue(),
                    context.getInjectedReference(TransactionManager.class), metrics(dataSourceName, micrometer),
                    spans(tracing));
        };
    }

    /**
     * The manager of an application built for in-memory locks ({@code quarkus.mysql-lock.in-memory}): no datasource is
     * injected (the factory, checking the configuration as for any manager, touches none); the transaction manager is,
     * as releases inside transactions wait for their end there too.
     */
    public Function<SyntheticCreationalContext<MySqlLockManager>, MySqlLockManager> inMemoryLockManager(
            String dataSourceName, boolean micrometer, boolean tracing) {
        return context -> {
            MySqlLockRuntimeConfig runtime = config.getValue();
            if (runtime.mode() == MySqlLockRuntimeConfig.Mode.NAMED || runtime.mode() == MySqlLockRuntimeConfig.Mode.LEASE) {
                // the production engine, in the same file as %test.quarkus.mysql-lock.in-memory=true
                LOG.infof("Distributed locks: in memory (quarkus.mysql-lock.in-memory=true, fixed when the application"
                        + " was built); quarkus.mysql-lock.mode=%s applies to builds without it",
                        runtime.mode().toString().toLowerCase());
            }
            return MySqlLockManagerFactory.createInMemory(dataSourceName, runtime,
                    context.getInjectedReference(TransactionManager.class), metrics(dataSourceName, micrometer),
                    spans(tracing));
        };
    }

    private static LockMetrics metrics(String dataSourceName, boolean micrometer) {
        return micrometer ? MicrometerLockMetrics.forDataSource(dataSourceName) : LockMetrics.NONE;
    }

    private static LockSpans spans(boolean tracing) {
        return tracing ? OpenTelemetryLockSpans.fromContainer() : LockSpans.NONE;
    }
}
