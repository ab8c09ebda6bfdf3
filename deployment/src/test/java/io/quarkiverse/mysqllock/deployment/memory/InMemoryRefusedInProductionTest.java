package io.quarkiverse.mysqllock.deployment.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.test.QuarkusProdModeTest;

/** A production build with {@code quarkus.mysql-lock.in-memory=true} fails, saying why and what to set instead. */
class InMemoryRefusedInProductionTest {

    @RegisterExtension
    static final QuarkusProdModeTest build = new QuarkusProdModeTest()
            .withEmptyApplication()
            .overrideConfigKey("quarkus.mysql-lock.in-memory", "true")
            .assertBuildException(failure -> {
                // the build step's exception is a suppressed one of the build's: read the whole trace
                java.io.StringWriter trace = new java.io.StringWriter();
                failure.printStackTrace(new java.io.PrintWriter(trace));
                assertThat(trace.toString()).contains(ConfigurationException.class.getName())
                        .contains("keep locks in one JVM's memory")
                        .contains("tests and dev mode only").contains("%test.quarkus.mysql-lock.in-memory=true");
            });

    @Test
    void theBuildFails() {
        fail("the build should have failed");
    }
}
