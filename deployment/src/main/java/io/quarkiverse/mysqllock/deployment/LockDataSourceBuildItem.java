package io.quarkiverse.mysqllock.deployment;

import io.quarkus.builder.item.SimpleBuildItem;

/** The name of the datasource that holds the locks, validated. */
public final class LockDataSourceBuildItem extends SimpleBuildItem {

    private final String name;

    public LockDataSourceBuildItem(String name) {
        this.name = name;
    }

    public String name() {
        return name;
    }
}
