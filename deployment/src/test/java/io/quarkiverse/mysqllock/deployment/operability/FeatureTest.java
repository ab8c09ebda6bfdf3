package io.quarkiverse.mysqllock.deployment.operability;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.inject.Inject;

import org.jboss.logmanager.ExtLogRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

class FeatureTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .setLogRecordPredicate(r -> r.getMessage() != null
                    && (r.getMessage().contains("Installed features") || r.getMessage().contains("Distributed locks")))
            .assertLogRecords(records -> {
                String log = records.stream().map(r -> ((ExtLogRecord) r).getFormattedMessage()).reduce("", String::concat);
                assertThat(log).contains("mysql-lock").contains("NAMED engine on datasource '<default>'")
                        .contains("because no replication is configured: the server reports no replication");
            });

    @Inject
    LockManager locks;

    @Test
    void theLockManagerIsInjectable() {
        assertThat(locks).isNotNull();
        assertThat(locks.mode()).isEqualTo(LockMode.NAMED);
    }
}
