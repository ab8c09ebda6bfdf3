package io.quarkiverse.mysqllock.deployment.coordination;

import static org.assertj.core.api.Assertions.fail;

import jakarta.enterprise.context.ApplicationScoped;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.WhileLeader;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StartupFailure;
import io.quarkus.test.QuarkusUnitTest;

/** Every misuse of {@code @WhileLeader} fails the build, each with a message naming the method. */
class WhileLeaderBuildErrorsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = StartupFailure.expect(LockApp.app(StartupFailure.class, Bad.class),
            "Invalid @WhileLeader usage",
            "Bad#hidden() is private",
            "Bad#result() returns int",
            "Bad#parameters() takes [java.lang.String]",
            "Bad#blank(): role \" \" is not a valid lock name");

    @Test
    void theBuildFails() {
        fail("the application built");
    }

    @ApplicationScoped
    public static class Bad {
        @WhileLeader("lead:bad")
        private void hidden() {
        }

        @WhileLeader("lead:bad")
        int result() {
            return 1;
        }

        @WhileLeader("lead:bad")
        void parameters(String what) {
        }

        @WhileLeader(" ")
        void blank() {
        }

        void callHidden() {
            hidden();
        }
    }
}
