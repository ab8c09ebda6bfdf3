package io.quarkiverse.mysqllock.runtime.locked;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkus.agroal.DataSource;

/** The lock managers of the methods that name a datasource ({@code datasource = "..."}), looked up once each. */
@Singleton
public class DataSourceManagers {

    @Inject
    MySqlLockManager lockDataSource;
    @Inject
    @Any
    Instance<MySqlLockManager> managers;

    private final Map<String, MySqlLockManager> byName = new ConcurrentHashMap<>();

    /** The manager of {@code dataSource}; the lock datasource's for null. */
    MySqlLockManager of(String dataSource) {
        return dataSource == null ? lockDataSource
                : byName.computeIfAbsent(dataSource, name -> managers.select(new DataSource.DataSourceLiteral(name)).get());
    }
}
