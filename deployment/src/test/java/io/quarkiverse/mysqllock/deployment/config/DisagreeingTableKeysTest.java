package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/** The new table key and the deprecated one, set to different tables: the start fails rather than pick one. */
class DisagreeingTableKeysTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(LockApp.app(StartupFailure.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.table", "new_lock")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.lease.table", "old_lock"),
            "quarkus.mysql-lock.table=new_lock and the deprecated quarkus.mysql-lock.lease.table=old_lock disagree");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
