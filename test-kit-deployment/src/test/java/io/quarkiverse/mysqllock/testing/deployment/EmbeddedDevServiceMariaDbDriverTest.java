package io.quarkiverse.mysqllock.testing.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkus.agroal.DataSource;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.scheduler.Trigger;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Two datasources without URLs, one of them on MariaDB's own driver ({@code quarkus-jdbc-mariadb}): each gets the
 * embedded server in its driver's URL scheme and a schema of its own, with the credentials the application set, and the
 * locks work on the MariaDB driver's one.
 */
class EmbeddedDevServiceMariaDbDriverTest {

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .overrideConfigKey("quarkus.datasource.db-kind", "mysql")
            .overrideConfigKey("quarkus.datasource.reports.db-kind", "mariadb")
            .overrideConfigKey("quarkus.mysql-lock.datasource", "reports")
            // credentials the application sets are kept, as Quarkus' containers take them
            .overrideConfigKey("quarkus.datasource.reports.username", "reporter")
            .overrideConfigKey("quarkus.datasource.reports.password", "reporter-secret")
            .overrideConfigKey("quarkus.log.category.\"ch.vorburger\".level", "WARN")
            .withApplicationRoot(jar -> jar.addClasses(ContainerRuntime.class, Job.class))
            .addBuildChainCustomizer(ContainerRuntime.told());

    @Inject
    @DataSource("reports")
    AgroalDataSource reports;

    @Inject
    AgroalDataSource orders;

    @Inject
    LockManager locks;

    @Inject
    Job job;

    @ConfigProperty(name = "quarkus.datasource.reports.jdbc.url")
    String reportsUrl;

    @ConfigProperty(name = "quarkus.datasource.reports.username")
    String reportsUser;

    @Test
    void eachDatasourceHasItsSchemaInItsDriversScheme() throws Exception {
        if (ContainerRuntime.found()) {
            return; // Quarkus' Dev Services start two containers: nothing of ours to check
        }
        assertThat(reportsUrl).startsWith("jdbc:mariadb://").endsWith("/ds_reports");
        assertThat(schema(reports)).isEqualTo("ds_reports");
        assertThat(reportsUser).as("the application's own user, kept").isEqualTo("reporter");
        assertThat(schema(orders)).isEqualTo("locktest");
        try (Connection connection = reports.getConnection()) {
            assertThat(connection.getMetaData().getDriverName()).containsIgnoringCase("MariaDB");
        }
        try (LockHandle lock = locks.acquire("dev-service:mariadb-driver", Duration.ofSeconds(5))) {
            assertThat(lock.fencingToken()).isPositive();
        }
    }

    /**
     * A scheduled job's claim hands its answer back through {@code LAST_INSERT_ID} and the driver's generated keys: on
     * MariaDB's driver too, a tick runs once, a late fire of it does not, and its history says so.
     */
    @Test
    void aScheduledJobClaimsItsTicksOnTheMariaDbDriver() {
        job.run(tick(90_000));
        job.run(tick(90_000));
        job.run(tick(91_000));
        assertThat(job.runs()).containsExactly(90_000L, 91_000L);
        assertThat(locks.jobs().history("dev-service:job", 10)).extracting(run -> run.tick().toEpochMilli() + " "
                + run.outcome()).containsExactly("91000 SUCCEEDED", "90000 SUCCEEDED");
    }

    private static ScheduledExecution tick(long epochMillis) {
        return new ScheduledExecution() {
            @Override
            public Trigger getTrigger() {
                return null;
            }

            @Override
            public Instant getFireTime() {
                return Instant.now();
            }

            @Override
            public Instant getScheduledFireTime() {
                return Instant.ofEpochMilli(epochMillis);
            }
        };
    }

    @ApplicationScoped
    public static class Job {

        final List<Long> runs = new CopyOnWriteArrayList<>();

        /** Through a method: the test holds a client proxy, whose own fields are not the bean's. */
        List<Long> runs() {
            return runs;
        }

        @Locked(value = "dev-service:job", onBusy = OnBusy.SKIP)
        public void run(ScheduledExecution execution) {
            runs.add(execution.getScheduledFireTime().toEpochMilli());
        }
    }

    private static String schema(AgroalDataSource dataSource) throws Exception {
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT DATABASE()")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
