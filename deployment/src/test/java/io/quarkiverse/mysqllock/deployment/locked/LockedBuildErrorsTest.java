package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Multi;

/** Every misuse of @Locked fails the build, each with a message naming the method and what to change. */
class LockedBuildErrorsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(LockApp.app(StartupFailure.class, Bad.class, Order.class),
            "Invalid @Locked usage",
            "Bad#missingParameter(): lock name template \"order:{orderId}\" refers to parameter 'orderId', which the"
                    + " method does not have (parameters: id)",
            "Bad#missingProperty(): lock name template \"{order.customer}\" refers to 'order.customer', but",
            "Bad#tooFewParameters(): lock name template \"{1}\" refers to parameter 1, but the method has 1 parameter(s)",
            "Bad#hidden() is private: interceptors do not apply to it",
            "Bad#stream() returns Multi",
            "Bad#badWait(): waitFor = \"soon\" is not a duration",
            "Bad#negativeWait(): waitFor = \"-1s\" must be a duration of zero or more",
            "Bad#skipPrimitive() returns int and has onBusy = SKIP",
            "Bad#unclosed(): lock name template \"order:{id\" is invalid: '{' at position 6 is never closed",
            "Bad#capped(): atMostFor = \"100ms\" must be at least 500ms");

    @Test
    void theBuildFails() {
        fail("the application built");
    }

    public record Order(String id) {
    }

    @ApplicationScoped
    public static class Bad {
        @Locked("order:{orderId}")
        public void missingParameter(String id) {
        }

        @Locked("{order.customer}")
        public void missingProperty(Order order) {
        }

        @Locked("{1}")
        public void tooFewParameters(String id) {
        }

        @Locked
        private void hidden() {
        }

        @Locked
        public Multi<String> stream() {
            return Multi.createFrom().empty();
        }

        @Locked(waitFor = "soon")
        public void badWait() {
        }

        @Locked(waitFor = "-1s")
        public void negativeWait() {
        }

        @Locked(onBusy = OnBusy.SKIP)
        public int skipPrimitive() {
            return 1;
        }

        @Locked("order:{id")
        public void unclosed(String id) {
        }

        @Locked(atMostFor = "100ms")
        public void capped() {
        }

        void callHidden() {
            hidden();
        }
    }
}
