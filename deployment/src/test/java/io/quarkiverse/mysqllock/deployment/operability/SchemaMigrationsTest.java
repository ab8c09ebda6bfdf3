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

import io.quarkiverse.mysqllock.runtime.table.AuditTable;
import io.quarkiverse.mysqllock.runtime.table.JobTable;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.table.RunTable;
import io.quarkiverse.mysqllock.test.TestDatabase;
import liquibase.Contexts;
import liquibase.Liquibase;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;

/**
 * The migrations of the lock table and the jobs tables (jobs, run history) as shipped in the runtime jar, run by the real
 * tools: Flyway with
 * the location {@code classpath:io/quarkiverse/mysqllock/schema} and Liquibase with its changelog create the very tables
 * the extension creates (same columns, types, defaults, collations, key), which the extension then accepts with
 * {@code create-table=false}; running either again, or Liquibase where the extension already made the tables, changes
 * nothing and fails nothing. An upgrade from a version without the jobs table (Liquibase having run its change set of
 * the lock table) adds the jobs table.
 */
class SchemaMigrationsTest {

    private static final List<String> SCHEMAS = List.of("lock_reference", "lock_flyway", "lock_liquibase",
            "lock_liquibase_after", "lock_liquibase_upgrade");
    private static final List<String> TABLES = List.of("mysql_lock", "mysql_lock_job", "mysql_lock_run", "mysql_lock_audit");
    private static final String CHANGE_SETS = "('quarkus-mysql-lock-table', 'quarkus-mysql-lock-job-table',"
            + " 'quarkus-mysql-lock-run-table', 'quarkus-mysql-lock-audit-table')";
    private static TestDatabase server;

    @BeforeAll
    static void freshSchemas() {
        server = TestDatabase.shared();
        for (String schema : SCHEMAS) {
            server.execute("DROP DATABASE IF EXISTS " + schema);
            server.execute("CREATE DATABASE " + schema);
        }
        // what the extension itself creates
        LockTable locks = new LockTable("mysql_lock", true);
        JobTable jobs = new JobTable(locks);
        for (String schema : List.of("lock_reference", "lock_liquibase_after")) {
            run(in(schema), locks.ddl());
            run(in(schema), jobs.ddl());
            run(in(schema), new RunTable(locks, jobs).ddl());
            run(in(schema), new AuditTable(locks).ddl());
        }
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
        assertThat(flyway.migrate().migrationsExecuted).as("migrations run the first time").isEqualTo(TABLES.size());
        assertThat(flyway.migrate().migrationsExecuted).as("migrations run again").isZero();
        assertSameTables(db);
        assertAccepted(db);
    }

    @Test
    void liquibaseCreatesTheTableTheExtensionCreates() throws Exception {
        TestDatabase db = in("lock_liquibase");
        update(db);
        update(db);
        assertSameTables(db);
        assertThat(db.queryLong("SELECT COUNT(*) FROM DATABASECHANGELOG WHERE ID IN " + CHANGE_SETS
                + " AND EXECTYPE = 'EXECUTED'")).isEqualTo(TABLES.size());
        assertAccepted(db);
    }

    @Test
    void liquibaseMarksTheChangeRunWhereTheExtensionAlreadyMadeTheTable() throws Exception {
        TestDatabase db = in("lock_liquibase_after");
        db.execute("INSERT INTO mysql_lock (name, fence) VALUES ('kept', 41)");
        update(db);
        assertThat(db.queryLong("SELECT COUNT(*) FROM DATABASECHANGELOG WHERE ID IN " + CHANGE_SETS
                + " AND EXECTYPE = 'MARK_RAN'")).isEqualTo(TABLES.size());
        assertThat(db.queryLong("SELECT fence FROM mysql_lock WHERE name = 'kept'")).isEqualTo(41);
    }

    /**
     * A database where Liquibase ran the changelog of a version without the jobs tables (its one change set, of the
     * lock table): the update adds the jobs tables, and keeps the lock table's rows.
     */
    @Test
    void liquibaseAddsTheJobsTablesToADatabaseOfAnEarlierVersion() throws Exception {
        TestDatabase db = in("lock_liquibase_upgrade");
        update(db);
        db.execute("DROP TABLE mysql_lock_job");
        db.execute("DROP TABLE mysql_lock_run");
        db.execute("DROP TABLE mysql_lock_audit");
        db.execute("DELETE FROM DATABASECHANGELOG WHERE ID <> 'quarkus-mysql-lock-table'");
        db.execute("INSERT INTO mysql_lock (name, fence) VALUES ('kept', 42)");
        update(db);
        assertSameTables(db);
        assertThat(db.queryLong("SELECT COUNT(*) FROM DATABASECHANGELOG WHERE ID IN " + CHANGE_SETS
                + " AND EXECTYPE = 'EXECUTED'")).isEqualTo(TABLES.size());
        assertThat(db.queryLong("SELECT fence FROM mysql_lock WHERE name = 'kept'")).isEqualTo(42);
    }

    private static void assertSameTables(TestDatabase db) throws SQLException {
        for (String table : TABLES) {
            assertThat(table(db, table)).as(table).isEqualTo(table(in("lock_reference"), table)).isNotEmpty();
        }
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
    private static List<String> table(TestDatabase db, String table) throws SQLException {
        List<String> shape = new ArrayList<>();
        try (Connection connection = db.connect();
                PreparedStatement columns = connection.prepareStatement("SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE,"
                        + " COLUMN_DEFAULT, COLLATION_NAME, COLUMN_KEY FROM information_schema.COLUMNS WHERE"
                        + " TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION")) {
            columns.setString(1, table);
            try (ResultSet rs = columns.executeQuery()) {
                while (rs.next()) {
                    shape.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3) + " " + rs.getString(4)
                            + " " + rs.getString(5) + " " + rs.getString(6));
                }
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
