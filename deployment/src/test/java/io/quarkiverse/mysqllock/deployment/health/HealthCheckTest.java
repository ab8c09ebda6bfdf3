package io.quarkiverse.mysqllock.deployment.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.runtime.health.MySqlLockHealthCheck;
import io.quarkus.test.QuarkusUnitTest;

/** The readiness check on a healthy NAMED engine, and what it reports about pinned connections. */
class HealthCheckTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    @Readiness
    MySqlLockHealthCheck check;

    @Inject
    LockManager locks;

    @Test
    void upWithTheEngineAndWhyItWasChosen() {
        HealthCheckResponse response = check.call();
        assertThat(response.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
        Map<String, Object> data = response.getData().orElseThrow();
        assertThat(data).containsEntry("engine", "NAMED").containsEntry("datasource", "<default>");
        assertThat((String) data.get("engine chosen because")).contains("no replication is configured");
        assertThat(data).containsKey("database round trip ms");
    }

    @Test
    void downWhenAPinnedConnectionLostItsLock() throws Exception {
        try (LockHandle handle = locks.acquire("health:pinned", Duration.ZERO)) {
            HealthCheckResponse before = check.call();
            assertThat(before.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
            assertThat(before.getData().orElseThrow()).containsEntry("pinned connections checked", 1L);

            io.quarkiverse.mysqllock.test.TestDatabase.shared().kill(ServerState.holder("health:pinned").orElseThrow());
            HealthCheckResponse after = check.call();

            assertThat(after.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
            assertThat((String) after.getData().orElseThrow().get("reason")).contains("pinned connection(s) failed");
            assertThat(handle.isValid()).isFalse();
        }
        assertThat(check.call().getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
    }
}
