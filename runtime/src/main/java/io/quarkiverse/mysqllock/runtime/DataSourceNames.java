package io.quarkiverse.mysqllock.runtime;

/** Datasource names as Quarkus spells them. */
public final class DataSourceNames {

    /** Quarkus's name of the default datasource. */
    public static final String DEFAULT = "<default>";

    private DataSourceNames() {
    }

    public static boolean isDefault(String name) {
        return name == null || DEFAULT.equals(name);
    }
}
