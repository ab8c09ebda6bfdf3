package io.quarkiverse.mysqllock.test;

import java.util.Map;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

/** Points a {@code @QuarkusTest} application's default datasource at {@link TestDatabase#shared()}. */
public class MariaDbTestResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        return TestDatabase.shared().quarkusConfig();
    }

    @Override
    public void stop() {
        // the shared server lives as long as the JVM
    }
}
