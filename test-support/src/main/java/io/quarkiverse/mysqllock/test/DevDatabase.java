package io.quarkiverse.mysqllock.test;

import java.util.concurrent.CountDownLatch;

/**
 * An embedded MariaDB server for dev mode: starts one, prints the JDBC URL and the dev-mode command that uses it, and
 * runs until stopped (Ctrl-C). No Docker, no installed database:
 *
 * <pre>
 * ./mvnw -q -pl test-support exec:java -Dexec.mainClass=io.quarkiverse.mysqllock.test.DevDatabase
 * </pre>
 */
public final class DevDatabase {

    private DevDatabase() {
    }

    public static void main(String[] args) throws InterruptedException {
        TestDatabase server = TestDatabase.startEmbedded();
        System.out.println();
        System.out.println("MariaDB is running: " + server.jdbcUrl() + " (user " + server.user() + ", no password).");
        System.out.println("In another terminal, run the sample application in dev mode against it:");
        System.out.println();
        System.out.println("  ./mvnw -pl integration-tests quarkus:dev -Dquarkus.datasource.jdbc.url=" + server.jdbcUrl()
                + " -Dquarkus.datasource.username=" + server.user());
        System.out.println();
        System.out.println("Then open http://localhost:8080/q/dev-ui (the MySQL Lock card). Ctrl-C stops the server.");
        new CountDownLatch(1).await();
    }
}
