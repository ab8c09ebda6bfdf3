package io.quarkiverse.mysqllock.deployment.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import jakarta.inject.Inject;

import org.jboss.logmanager.ExtLogRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;

/**
 * quarkus.mysql-lock.replication=true makes AUTO choose LEASE without asking the server, and says why, once. On a lock
 * table of its own: a fleet's record left in the shared one by an earlier LEASE test class would be the reason given.
 */
class AutoModeTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideRuntimeConfigKey("quarkus.mysql-lock.replication", "true")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.table", "auto_mode_lock")
            .setLogRecordPredicate(r -> r.getMessage() != null && r.getMessage().contains("Distributed locks"))
            .assertLogRecords(records -> {
                assertThat(records).hasSize(1);
                assertThat(((ExtLogRecord) records.get(0)).getFormattedMessage())
                        .contains("LEASE engine").contains("quarkus.mysql-lock.replication=true");
            });

    @Inject
    LockManager locks;

    @Test
    void leaseIsChosen() {
        assertThat(locks.mode()).isEqualTo(LockMode.LEASE);
        try (LockHandle handle = locks.acquire("auto:lease", Duration.ZERO)) {
            assertThat(ServerState.queryString("SELECT owner FROM auto_mode_lock WHERE name = 'auto:lease'")).isNotNull();
            assertThat(ServerState.holder("auto:lease")).isEmpty(); // no named lock
        }
    }
}
