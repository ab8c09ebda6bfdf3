package io.quarkiverse.mysqllock.deployment;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.quarkus.agroal.spi.JdbcDataSourceBuildItem;
import io.quarkus.builder.item.SimpleBuildItem;

/**
 * The name of the datasource that holds the locks, validated; and whether the application is built for in-memory locks
 * instead ({@code quarkus.mysql-lock.in-memory}), which need no datasource.
 */
public final class LockDataSourceBuildItem extends SimpleBuildItem {

    private final String name;
    private final boolean inMemory;

    public LockDataSourceBuildItem(String name, boolean inMemory) {
        this.name = name;
        this.inMemory = inMemory;
    }

    public String name() {
        return name;
    }

    /** Whether the application is built for in-memory locks (tests and dev mode only). */
    public boolean inMemory() {
        return inMemory;
    }

    /** The datasources that get a {@code LockManager}: the lock datasource, and each MySQL or MariaDB one. */
    public static Set<String> managed(String lockDataSource, List<JdbcDataSourceBuildItem> dataSources,
            boolean inMemory) {
        Set<String> names = new TreeSet<>();
        names.add(lockDataSource);
        if (!inMemory) {
            for (JdbcDataSourceBuildItem dataSource : dataSources) {
                if (SUPPORTED_DB_KINDS.contains(dataSource.getDbKind())) {
                    names.add(dataSource.getName());
                }
            }
        }
        return names;
    }

    static final Set<String> SUPPORTED_DB_KINDS = Set.of("mysql", "mariadb");
}
