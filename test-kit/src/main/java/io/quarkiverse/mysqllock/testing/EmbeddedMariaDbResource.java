package io.quarkiverse.mysqllock.testing;

import java.util.LinkedHashMap;
import java.util.Map;

import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.common.QuarkusTestResourceConfigurableLifecycleManager;

/** Starts the JVM's embedded MariaDB server (once) and configures a datasource for it: see {@link EmbeddedMariaDb}. */
public class EmbeddedMariaDbResource implements QuarkusTestResourceConfigurableLifecycleManager<EmbeddedMariaDb> {

    private static final String DEFAULT = "<default>";

    private String datasource = DEFAULT;

    @Override
    public void init(EmbeddedMariaDb annotation) {
        String name = annotation.datasource();
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("@EmbeddedMariaDb(datasource = \"\"): name a datasource, or leave the"
                    + " attribute out for the default one");
        }
        this.datasource = name;
    }

    @Override
    public Map<String, String> start() {
        return configFor(TestDatabase.shared(), datasource);
    }

    /** The datasource properties that point {@code datasource} at {@code server}. */
    static Map<String, String> configFor(TestDatabase server, String datasource) {
        String prefix = DEFAULT.equals(datasource) ? "quarkus.datasource."
                : "quarkus.datasource.\"" + datasource + "\".";
        Map<String, String> config = new LinkedHashMap<>();
        config.put(prefix + "jdbc.url", urlForDriver(server.jdbcUrl()));
        config.put(prefix + "username", server.user());
        config.put(prefix + "password", server.password());
        config.put(prefix + "devservices.enabled", "false");
        return config;
    }

    /** The URL in the scheme of the driver the application has: MariaDB's driver takes only {@code jdbc:mariadb:}. */
    static String urlForDriver(String url) {
        if (url.startsWith("jdbc:mysql:") && !present("com.mysql.cj.jdbc.Driver") && present("org.mariadb.jdbc.Driver")) {
            return "jdbc:mariadb:" + url.substring("jdbc:mysql:".length());
        }
        return url;
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, Thread.currentThread().getContextClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    @Override
    public void stop() {
        // the server serves every test class of the JVM and stops with it
    }
}
