package io.quarkiverse.mysqllock.deployment.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * With DDL creation disabled, a table that goes missing after start-up is an error that gives the DDL, and the lock
 * itself is unharmed. (A table missing at start-up stops the start-up: {@link MissingLockTableAtStartupTest}.)
 */
class MissingLockTableTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .setBeforeAllCustomizer(() -> TestDatabase.shared().execute(new LockTable("absent_lock_table", true).ddl()))
            .overrideRuntimeConfigKey("quarkus.mysql-lock.table", "absent_lock_table")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.create-table", "false");

    @Inject
    LockManager locks;

    @Test
    void theErrorCarriesTheDdlToRun() {
        TestDatabase.shared().execute("DROP TABLE absent_lock_table");
        try (LockHandle handle = locks.acquire("missing:table", Duration.ZERO)) {
            assertThatThrownBy(handle::fencingToken).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("absent_lock_table")
                    .hasMessageContaining("quarkus.mysql-lock.create-table=false")
                    .hasMessageContaining("CREATE TABLE IF NOT EXISTS absent_lock_table");
            assertThat(handle.isValid()).isTrue();
            assertThat(ServerState.holder("missing:table")).isPresent();
        }
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME ="
                + " 'absent_lock_table'")).isZero();
    }
}
