package io.quarkiverse.mysqllock.deployment.memory;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An application whose configuration names its production engine ({@code quarkus.mysql-lock.mode=lease}) beside
 * {@code %test.quarkus.mysql-lock.in-memory=true}: built for tests, its locks are in memory, and the start says the mode
 * applies to builds without it (it used to refuse to start, so following the deprecation advice broke such tests).
 */
class InMemoryBuildWithADatabaseEngineTest {

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .overrideConfigKey("quarkus.mysql-lock.in-memory", "true")
            .overrideConfigKey("quarkus.datasource.devservices.enabled", "false") // no database at all
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease")
            .setLogRecordPredicate(record -> record.getLoggerName().endsWith("MySqlLockRecorder"))
            .assertLogRecords(records -> assertThat(records).anySatisfy(
                    record -> assertThat(record.getMessage()).contains("applies to builds without it")));

    @Inject
    LockManager locks;

    @Test
    void theLocksAreInMemory() {
        assertThat(((MySqlLockManager) locks).engine()).isInstanceOf(InMemoryEngine.class);
    }
}
