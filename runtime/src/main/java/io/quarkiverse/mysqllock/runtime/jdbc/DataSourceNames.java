package io.quarkiverse.mysqllock.runtime.jdbc;

/** Datasource names as Quarkus spells them. */
public final class DataSourceNames {

    /** Quarkus's name of the default datasource. */
    public static final String DEFAULT = "<default>";

    private DataSourceNames() {
    }

    public static boolean isDefault(String name) {
        return name == null || DEFAULT.equals(name);
    }

    /** The full name of one of a datasource's properties, such as {@code jdbc.max-size}. */
    public static String property(String name, String suffix) {
        return isDefault(name) ? "quarkus.datasource." + suffix : "quarkus.datasource.\"" + name + "\"." + suffix;
    }
}
