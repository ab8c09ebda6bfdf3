package io.quarkiverse.mysqllock.testing.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;

import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An application with the test kit and a MySQL datasource with no URL, and no property about Dev Services: its test
 * gets a database. With no container runtime (these machines, many laptops), it is the JVM's embedded MariaDB; with
 * one, Quarkus' own Dev Services container.
 */
class EmbeddedDevServiceTest {

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .overrideConfigKey("quarkus.datasource.db-kind", "mysql")
            .overrideConfigKey("quarkus.log.category.\"ch.vorburger\".level", "WARN")
            .withApplicationRoot(jar -> jar.addClass(ContainerRuntime.class))
            .addBuildChainCustomizer(ContainerRuntime.told())
            .setLogRecordPredicate(record -> record.getLoggerName().contains("EmbeddedDevServicesProcessor"))
            .assertLogRecords(records -> {
                if (!ContainerRuntime.found()) {
                    assertThat(records).anySatisfy(record -> assertThat(record.getMessage())
                            .contains("no container runtime found, the embedded MariaDB at"));
                }
            });

    @Inject
    LockManager locks;

    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "quarkus.datasource.jdbc.url")
    String url;

    @Test
    void theTestHasADatabaseAndTheLocksWork() throws Exception {
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT DATABASE()")) {
            assertThat(rs.next()).isTrue();
            if (!ContainerRuntime.found()) {
                assertThat(rs.getString(1)).isEqualTo(TestDatabase.SCHEMA);
                assertThat(url).isEqualTo(TestDatabase.shared().jdbcUrl());
                assertThat(ContainerRuntime.embeddedServices()).as("embedded Dev Services produced").isEqualTo(1);
            }
        }
        try (LockHandle lock = locks.acquire("dev-service:works", Duration.ofSeconds(5))) {
            assertThat(lock.fencingToken()).isPositive();
        }
    }
}
