package io.quarkiverse.mysqllock.deployment.memory;

import static org.assertj.core.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An application built for in-memory locks that finds a database engine named at run time refuses to start rather than
 * keep its locks in memory unnoticed.
 */
class InMemoryBuildWithADatabaseEngineTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(new QuarkusUnitTest()
            .withApplicationRoot(jar -> jar.addClasses(StartupFailure.class))
            .overrideConfigKey("quarkus.mysql-lock.in-memory", "true")
            .overrideConfigKey("quarkus.datasource.devservices.enabled", "false") // no database at all
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease"),
            "quarkus.mysql-lock.mode=lease at run time, but the application was built for in-memory locks");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }
}
