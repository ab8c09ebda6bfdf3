package io.quarkiverse.mysqllock.deployment.health;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.runtime.health.MySqlLockHealthCheck;
import io.quarkus.test.QuarkusUnitTest;

/** {@code quarkus.mysql-lock.health.enabled=false}: no lock check among the health checks. */
class HealthDisabledTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideConfigKey("quarkus.mysql-lock.health.enabled", "false");

    @Inject
    @Any
    Instance<HealthCheck> checks;

    @Test
    void theLockCheckIsNotRegistered() {
        assertThat(checks.stream()).noneMatch(check -> check instanceof MySqlLockHealthCheck);
        assertThat(checks.stream().map(Object::getClass).map(Class::getName))
                .as("other checks are still there").isNotEmpty();
    }
}
