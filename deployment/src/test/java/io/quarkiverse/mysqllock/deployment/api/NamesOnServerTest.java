package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.runtime.LockNames;
import io.quarkus.test.QuarkusUnitTest;

/** Long, unicode and case-variant names on a real server, under a namespace. */
class NamesOnServerTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideRuntimeConfigKey("quarkus.mysql-lock.namespace", "tenant-a");

    @Inject
    LockManager locks;

    @Test
    void everyKindOfNameLocksAndTheNamespaceIsOnTheServer() throws Exception {
        LockNames names = LockNames.withNamespace("tenant-a");
        for (String name : List.of("plain", "Case:Sensitive", "x".repeat(300), "заказ:1001", "订单:7", "emoji:🔒")) {
            try (LockHandle handle = locks.acquire(name, Duration.ZERO)) {
                assertThat(ServerState.holder(names.serverName(name))).as(name).isPresent();
                assertThat(LockApp.otherThreadAcquires(locks, name)).as(name).isFalse();
                assertThat(handle.fencingToken()).isPositive();
            }
            assertThat(ServerState.holder(names.serverName(name))).as(name).isEmpty();
        }
        try (LockHandle plain = locks.acquire("plain", Duration.ZERO)) {
            assertThat(ServerState.holder("tenant-a:plain")).isPresent();
            assertThat(ServerState.holder("plain")).isEmpty();
        }
    }

    @Test
    void namesThatDifferOnlyInCaseAreDifferentLocks() throws Exception {
        try (LockHandle lower = locks.acquire("order:abc", Duration.ZERO)) {
            assertThat(LockApp.otherThreadAcquires(locks, "order:ABC")).isTrue();
            assertThat(LockApp.otherThreadAcquires(locks, "Order:abc")).isTrue();
            assertThat(LockApp.otherThreadAcquires(locks, "order:abc")).isFalse();
        }
    }

}
