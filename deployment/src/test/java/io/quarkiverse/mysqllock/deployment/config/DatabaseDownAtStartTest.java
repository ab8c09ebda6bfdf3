package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A lock manager created while its database is unreachable: it starts, locks fail with a clear error and health is
 * DOWN, and once the database answers everything works without a restart.
 */
class DatabaseDownAtStartTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void startsDownAndRecoversWhenTheDatabaseAnswers() throws Exception {
        TestDatabase db = TestDatabase.shared();
        try (TcpProxy proxy = TcpProxy.start("down-at-start", db.port())) {
            proxy.cut();
            try (StandaloneLocks instance = new StandaloneLocks(db.via(proxy), "down-at-start", Mode.AUTO,
                    Optional.empty())) {
                EngineHealth down = instance.locks.health();
                assertThat(down.isUp()).isFalse();
                assertThat(down.problem()).contains("could not be chosen");
                assertThat(down.data()).containsEntry("engine", "not chosen yet: AUTO");

                assertThatThrownBy(() -> instance.locks.acquire("down:lock", Duration.ZERO))
                        .isInstanceOfSatisfying(LockNotAcquiredException.class,
                                e -> assertThat(e.reason()).isEqualTo(LockNotAcquiredException.Reason.DATABASE_ERROR))
                        .hasMessageContaining("down:lock").hasMessageContaining("datasource 'standalone'");
                // the engine is not chosen yet: asking which one it is asks the database, and fails as a query does
                assertThatThrownBy(instance.locks::mode).isInstanceOfAny(LockNotAcquiredException.class,
                        IllegalStateException.class);

                proxy.heal();
                LockApp.await("health to come UP", Duration.ofSeconds(10), () -> instance.locks.health().isUp());
                assertThat(instance.locks.health().data()).containsEntry("engine", "NAMED");
                try (LockHandle handle = instance.locks.acquire("down:lock", Duration.ZERO)) {
                    assertThat(handle.isValid()).isTrue();
                }
            }
        }
    }
}
