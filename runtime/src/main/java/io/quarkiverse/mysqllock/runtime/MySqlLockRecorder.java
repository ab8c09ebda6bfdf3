package io.quarkiverse.mysqllock.runtime;

import java.util.function.Function;

import jakarta.transaction.TransactionManager;

import io.agroal.api.AgroalDataSource;
import io.quarkus.agroal.runtime.AgroalDataSourceUtil;
import io.quarkus.arc.SyntheticCreationalContext;
import io.quarkus.runtime.RuntimeValue;
import io.quarkus.runtime.annotations.Recorder;

@Recorder
public class MySqlLockRecorder {

    private final RuntimeValue<MySqlLockRuntimeConfig> config;

    public MySqlLockRecorder(RuntimeValue<MySqlLockRuntimeConfig> config) {
        this.config = config;
    }

    public Function<SyntheticCreationalContext<MySqlLockManager>, MySqlLockManager> lockManager(String dataSourceName) {
        return context -> {
            AgroalDataSource dataSource = context.getInjectedReference(AgroalDataSource.class,
                    AgroalDataSourceUtil.qualifier(dataSourceName));
            return MySqlLockManagerFactory.create(dataSource, dataSourceName, config.getValue(),
                    context.getInjectedReference(TransactionManager.class));
        };
    }
}
