package io.quarkiverse.mysqllock.runtime.health;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManagerFactory;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;

/**
 * Readiness of the distributed locks (registered when {@code quarkus-smallrye-health} is present and
 * {@code quarkus.mysql-lock.health.enabled} is true): the engine and why it was chosen, that the lock database answers,
 * for NAMED that the pinned connections still hold their locks, for LEASE that the server clock, which times leases,
 * runs steadily. DOWN, with the reason, when locks cannot be taken or trusted now.
 */
@Readiness
@ApplicationScoped
public class MySqlLockHealthCheck implements HealthCheck {

    static final String NAME = "MySQL/MariaDB distributed locks";

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder builder = HealthCheckResponse.named(NAME).up();
        List<MySqlLockManager> managers = MySqlLockManagerFactory.created();
        boolean several = managers.size() > 1;
        for (MySqlLockManager manager : managers) {
            EngineHealth health = manager.health();
            String prefix = several ? health.data().getOrDefault("datasource", "?") + ": " : "";
            health.data().forEach((key, value) -> {
                if (value instanceof Number number) {
                    builder.withData(prefix + key, number.longValue());
                } else {
                    builder.withData(prefix + key, String.valueOf(value));
                }
            });
            if (!health.isUp()) {
                builder.down().withData(prefix + "reason", health.problem());
            }
        }
        return builder.build();
    }
}
