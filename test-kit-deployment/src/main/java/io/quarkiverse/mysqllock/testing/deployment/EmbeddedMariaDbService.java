package io.quarkiverse.mysqllock.testing.deployment;

import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.datasource.common.runtime.DataSourceUtil;
import io.quarkus.datasource.common.runtime.DatabaseKind;
import io.quarkus.deployment.builditem.Startable;

/**
 * The embedded MariaDB server of the JVM as one datasource's Dev Service: the default datasource gets the server's
 * schema ({@value TestDatabase#SCHEMA}), another datasource a schema of its own name, created when missing. The server
 * serves every test of the JVM and stops with it: closing the service leaves it running.
 */
final class EmbeddedMariaDbService implements Startable {

    private final String schema;
    private TestDatabase server;

    EmbeddedMariaDbService(String datasource) {
        this.schema = DataSourceUtil.isDefault(datasource) ? TestDatabase.SCHEMA : schemaOf(datasource);
    }

    /** {@code ds_<name>}; a name with other characters than letters, digits and _ also gets its hash, to stay apart. */
    static String schemaOf(String datasource) {
        String plain = datasource.replaceAll("[^A-Za-z0-9_]", "_");
        return "ds_" + (plain.equals(datasource) ? plain : plain + "_" + Integer.toHexString(datasource.hashCode()));
    }

    @Override
    public void start() {
        TestDatabase shared = TestDatabase.shared();
        if (!schema.equals(TestDatabase.SCHEMA)) {
            shared.execute("CREATE DATABASE IF NOT EXISTS " + schema);
        }
        server = shared.withUrl(shared.jdbcUrl().replaceFirst("(//[^/]+/)[^?]*", "$1" + schema));
    }

    /** The URL in the scheme of the application's driver: MariaDB Connector/J takes only {@code jdbc:mariadb:}. */
    String jdbcUrl(String kind) {
        String url = server.jdbcUrl();
        return DatabaseKind.isMariaDB(kind) && url.startsWith("jdbc:mysql:") ? "jdbc:mariadb:" + url.substring(11) : url;
    }

    String user() {
        return server.user();
    }

    String password() {
        return server.password();
    }

    @Override
    public String getConnectionInfo() {
        return server == null ? null : server.jdbcUrl();
    }

    @Override
    public String getContainerId() {
        return null;
    }

    @Override
    public void close() {
        // the JVM's server outlives one application start: every test class and dev-mode restart uses it
    }
}
