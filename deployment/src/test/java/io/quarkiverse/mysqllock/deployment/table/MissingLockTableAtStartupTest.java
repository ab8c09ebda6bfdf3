package io.quarkiverse.mysqllock.deployment.table;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/** create-table=false and no table: the application does not start, and the error gives the DDL to run. */
class MissingLockTableAtStartupTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(LockApp.app(StartupFailure.class)
            .overrideConfigKey("quarkus.mysql-lock.table", "never_created_locks")
            .overrideConfigKey("quarkus.mysql-lock.create-table", "false"),
            "The lock table 'never_created_locks' does not exist", "quarkus.mysql-lock.create-table=false",
            "CREATE TABLE IF NOT EXISTS never_created_locks (");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
