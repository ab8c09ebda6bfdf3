package io.quarkiverse.mysqllock.it;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * Starts instances of the application as separate JVMs, running the {@link ContentionWorker} when it is given
 * settings.
 */
final class Workers {

    private Workers() {
    }

    static Path jar() {
        Path jar = Path.of(System.getProperty("app.jar", "target/quarkus-app/quarkus-run.jar"));
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " does not exist: build the application first (mvn package)");
        }
        return jar;
    }

    /** The HTTP port of a started instance, from its start-up log. */
    static int httpPort(AppProcess process) {
        String line = process.awaitLine(l -> l.contains("Listening on: http://"), java.time.Duration.ofSeconds(60));
        return Integer.parseInt(line.replaceAll(".*Listening on: http://[^:]+:(\\d+).*", "$1"));
    }

    static AppProcess start(TestDatabase db, String instance, Map<String, String> worker, PrintStream echo) {
        return start(db, instance, worker, echo, line -> true);
    }

    static AppProcess start(TestDatabase db, String instance, Map<String, String> worker, PrintStream echo,
            java.util.function.Predicate<String> echoed) {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("quarkus.http.port", "0");
        properties.put("quarkus.datasource.jdbc.url", db.jdbcUrl());
        properties.put("quarkus.datasource.username", db.user());
        properties.put("quarkus.datasource.password", db.password());
        properties.put("quarkus.mysql-lock.instance-id", instance);
        properties.put("quarkus.log.console.format", "%d{HH:mm:ss.SSS} %-5p %s%e%n");
        properties.put("lock-demo.worker.enabled",
                String.valueOf(worker.keySet().stream().anyMatch(key -> !key.contains("."))));
        properties.put("lock-demo.worker.instance", instance);
        worker.forEach((key, value) -> properties.put(
                key.startsWith("quarkus.") || key.startsWith("lock-demo.") ? key : "lock-demo.worker." + key, value));
        return AppProcess.start(instance, jar(), properties, echo, echoed);
    }
}
