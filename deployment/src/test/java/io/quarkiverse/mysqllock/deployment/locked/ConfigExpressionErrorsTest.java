package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/** A duration expression that resolves to nothing usable stops the application at start, naming the method. */
class ConfigExpressionErrorsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(LockApp.app(StartupFailure.class, Bad.class)
            .overrideRuntimeConfigKey("bad.cap", "soon")
            .overrideRuntimeConfigKey("bad.least", "10s"),
            "ConfigExpressionErrorsTest$Bad#unset(): waitFor = \"${bad.unset}\": the property bad.unset is not set",
            "ConfigExpressionErrorsTest$Bad#notADuration(): atMostFor = \"${bad.cap}\" is \"soon\", which is not a duration",
            "ConfigExpressionErrorsTest$Bad#leastBeyondMost(): Lock option atLeastFor (PT10S) must not be longer than"
                    + " atMostFor (PT1S)");

    @Test
    void theApplicationDoesNotStart() {
        fail("the application started");
    }

    @ApplicationScoped
    public static class Bad {
        @Locked(value = "bad:unset", waitFor = "${bad.unset}")
        public void unset() {
        }

        @Locked(value = "bad:cap", atMostFor = "${bad.cap}")
        public void notADuration() {
        }

        @Locked(value = "bad:least", atLeastFor = "${bad.least}", atMostFor = "1s")
        public void leastBeyondMost() {
        }
    }
}
