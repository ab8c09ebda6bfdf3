package io.quarkiverse.mysqllock.deployment.operability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.test.TestDatabase;
import liquibase.Contexts;
import liquibase.Liquibase;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;

/**
 * The lock table's migrations as shipped in the runtime jar, run by the real tools: Flyway with the location
 * {@code classpath:io/quarkiverse/mysqllock/schema} and Liquibase with its changelog create the very table the extension
 * creates (same columns, types, defaults, collations, key), which the extension then accepts with
 * {@code create-table=false}; running either again, or Liquibase where the extension already made the table, changes
 * nothing and fails nothing.
 */
class SchemaMigrationsTest {

    private static final List<String> SCHEMAS = List.of("lock_reference", "lock_flyway", "lock_liquibase",
            "lock_liquibase_after");
    private static TestDatabase server;

    @BeforeAll
    static void freshSchemas() {
        server = TestDatabase.shared();
        for (String schema : SCHEMAS) {
            server.execute("DROP DATABASE IF EXISTS " + schema);
            server.execute("CREATE DATABASE " + schema);
        }
        // what the extension itself creates
        run(in("lock_reference"), new LockTable("mysql_lock", true).ddl());
        run(in("lock_liquibase_after"), new LockTable("mysql_lock", true).ddl());
    }

    @AfterAll
    static void dropSchemas() {
        SCHEMAS.forEach(schema -> server.execute("DROP DATABASE IF EXISTS " + schema));
    }

    @Test
    void flywayCreatesTheTableTheExtensionCreates() throws SQLException {
        TestDatabase db = in("lock_flyway");
        Flyway flyway = Flyway.configure().dataSource(db.jdbcUrl(), db.user(), db.password())
                .locations("classpath:" + LockTable.SCHEMA_LOCATION).load();
        assertThat(flyway.migrate().migrationsExecuted).as("migrations run the first time").isEqualTo(1);
        assertThat(flyway.migrate().migrationsExecuted).as("migrations run again").isZero();
        assertThat(table(db)).isEqualTo(table(in("lock_reference"))).isNotEmpty();
        assertAccepted(db);
    }

    @Test
    void liquibaseCreatesTheTableTheExtensionCreates() throws Exception {
        TestDatabase db = in("lock_liquibase");
        update(db);
        update(db);
        assertThat(table(db)).isEqualTo(table(in("lock_reference"))).isNotEmpty();
        assertThat(db.queryLong("SELECT COUNT(*) FROM DATABASECHANGELOG WHERE ID = 'quarkus-mysql-lock-table'"
                + " AND EXECTYPE = 'EXECUTED'")).isEqualTo(1);
        assertAccepted(db);
    }

    @Test
    void liquibaseMarksTheChangeRunWhereTheExtensionAlreadyMadeTheTable() throws Exception {
        TestDatabase db = in("lock_liquibase_after");
        db.execute("INSERT INTO mysql_lock (name, fence) VALUES ('kept', 41)");
        update(db);
        assertThat(db.queryLong("SELECT COUNT(*) FROM DATABASECHANGELOG WHERE ID = 'quarkus-mysql-lock-table'"
                + " AND EXECTYPE = 'MARK_RAN'")).isEqualTo(1);
        assertThat(db.queryLong("SELECT fence FROM mysql_lock WHERE name = 'kept'")).isEqualTo(41);
    }

    private static void update(TestDatabase db) throws Exception {
        try (Connection connection = db.connect()) {
            var database = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(connection));
            new Liquibase(LockTable.LIQUIBASE_CHANGELOG, new ClassLoaderResourceAccessor(), database)
                    .update(new Contexts());
        }
    }

    /** The extension with create-table=false starts on the table. */
    private static void assertAccepted(TestDatabase db) throws SQLException {
        try (Connection connection = db.connect()) {
            assertThatCode(() -> new LockTable("mysql_lock", false).verify(connection, 255)).doesNotThrowAnyException();
        }
    }

    /** Every column with its type, nullability, default, collation, and the key. */
    private static List<String> table(TestDatabase db) throws SQLException {
        List<String> shape = new ArrayList<>();
        try (Connection connection = db.connect();
                PreparedStatement columns = connection.prepareStatement("SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE,"
                        + " COLUMN_DEFAULT, COLLATION_NAME, COLUMN_KEY FROM information_schema.COLUMNS WHERE"
                        + " TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'mysql_lock' ORDER BY ORDINAL_POSITION");
                ResultSet rs = columns.executeQuery()) {
            while (rs.next()) {
                shape.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3) + " " + rs.getString(4) + " "
                        + rs.getString(5) + " " + rs.getString(6));
            }
        }
        return shape;
    }

    private static TestDatabase in(String schema) {
        return server.withUrl(server.jdbcUrl().replaceFirst("(//[^/]+/)[^?]*", "$1" + schema));
    }

    private static void run(TestDatabase db, String sql) {
        try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
