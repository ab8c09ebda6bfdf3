package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

class MultiHostRefusedTest {

    static final String URL = TestDatabase.shared().jdbcUrl().replace("jdbc:mysql://", "jdbc:mysql:replication://")
            .replaceFirst("/locktest", ",127.0.0.1:1/locktest");

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(
            LockApp.app(StartupFailure.class).overrideConfigKey("quarkus.datasource.jdbc.url", URL)
                    .overrideConfigKey("quarkus.mysql-lock.mode", "named"),
            "cannot hold named locks", "replication, load-balancing or failover", "not replicated");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
