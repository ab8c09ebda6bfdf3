package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The table settings moved from {@code quarkus.mysql-lock.lease.*} to the top level, since both engines use the table:
 * the old keys still work, with a warning that names the new ones.
 */
class DeprecatedTableKeysTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideRuntimeConfigKey("quarkus.mysql-lock.lease.table", "deprecated_key_lock")
            .setLogRecordPredicate(record -> record.getLoggerName().endsWith("MySqlLockManagerFactory"))
            .assertLogRecords(records -> assertThat(records).anySatisfy(record -> assertThat(
                    String.format(record.getMessage(), record.getParameters()))
                    .contains("quarkus.mysql-lock.lease.table is deprecated")
                    .contains("set quarkus.mysql-lock.table instead")));

    @Inject
    LockManager locks;

    @Test
    void theDeprecatedKeyStillNamesTheTable() {
        try (LockHandle lock = locks.acquire("deprecated:key")) {
            assertThat(lock.fencingToken()).isPositive();
        }
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE()"
                + " AND table_name = 'deprecated_key_lock'")).isEqualTo(1);
    }
}
