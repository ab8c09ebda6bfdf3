package io.quarkiverse.mysqllock.deployment.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.logging.Level;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The former {@code quarkus.mysql-lock.mode=in-memory}, seen by the build, still builds an in-memory application (no
 * datasource), and the build says which build-time setting replaces it.
 */
class DeprecatedInMemoryModeTest {

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .overrideConfigKey("quarkus.mysql-lock.mode", "in-memory")
            .overrideConfigKey("quarkus.datasource.devservices.enabled", "false") // no database at all
            .setLogRecordPredicate(record -> record.getLevel().intValue() >= Level.WARNING.intValue()
                    && record.getMessage() != null && record.getMessage().contains("in-memory is deprecated"))
            .assertLogRecords(records -> assertThat(records).hasSize(1).first()
                    .satisfies(record -> assertThat(record.getMessage()).contains("quarkus.mysql-lock.in-memory=true")));

    @Inject
    LockManager locks;

    @Test
    void itStillMakesInMemoryLocks() {
        assertThat(((MySqlLockManager) locks).engine()).isInstanceOf(InMemoryEngine.class);
        try (LockHandle lock = locks.acquire("deprecated-mode:x", Duration.ZERO)) {
            assertThat(lock.isValid()).isTrue();
        }
    }
}
