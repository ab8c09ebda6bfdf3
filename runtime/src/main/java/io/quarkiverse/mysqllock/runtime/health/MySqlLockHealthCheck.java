package io.quarkiverse.mysqllock.runtime.health;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

import io.quarkiverse.mysqllock.runtime.EngineHealth;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ArcContainer;
import io.quarkus.arc.InjectableContext;

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
        List<MySqlLockManager> managers = createdManagers();
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

    /**
     * The lock managers in use: the lock datasource's, and those of other datasources once injected somewhere. A
     * datasource nobody takes locks from is not checked (creating its manager here would make its outage ours).
     */
    private static List<MySqlLockManager> createdManagers() {
        ArcContainer arc = Arc.container();
        InjectableContext singletons = arc.getActiveContext(Singleton.class);
        List<MySqlLockManager> managers = new ArrayList<>();
        for (Bean<?> bean : arc.beanManager().getBeans(MySqlLockManager.class, Any.Literal.INSTANCE)) {
            Object manager = singletons.get(bean);
            if (manager instanceof MySqlLockManager lockManager) {
                managers.add(lockManager);
            }
        }
        return managers;
    }
}
