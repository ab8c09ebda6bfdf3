package io.quarkiverse.mysqllock.deployment.fence;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.enterprise.inject.spi.DeploymentException;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.Fenced;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** A {@code @Fenced} lock name the build cannot resolve fails the build, every misuse named. */
class FencedMisuseTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Misused.class).assertException(failure -> {
        assertThat(failure).isInstanceOf(DeploymentException.class);
        assertThat(failure.getMessage()).contains("Invalid @Fenced usage")
                .contains("Misused#unknown()").contains("{nope}")
                .contains("Misused#blank()").contains("names no lock")
                .contains("Misused#configured()").contains("config expression");
    });

    @Path("/misused")
    public static class Misused {

        @POST
        @Path("{id}")
        @Fenced("order:{nope}")
        public String unknown(@PathParam("id") String id) {
            return id;
        }

        @POST
        @Path("blank")
        @Fenced("")
        public String blank() {
            return "";
        }

        @POST
        @Path("configured")
        @Fenced("${order.lock}")
        public String configured() {
            return "";
        }
    }

    @Test
    void theBuildFails() {
        // the extension's assertion above
    }
}
