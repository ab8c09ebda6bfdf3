package io.quarkiverse.mysqllock.deployment.rest;

import static io.restassured.RestAssured.given;

import java.time.Duration;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** The mapping is opt-in: without quarkus.mysql-lock.rest.map-exceptions the exception is a 500, as any other. */
class RestExceptionMappingOffTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Failing.class);

    @Test
    void withoutThePropertyTheExceptionIsAServerError() {
        given().get("/failing/BUSY").then().statusCode(500);
    }

    @Path("/failing")
    public static class Failing {
        @GET
        @Path("{reason}")
        public String fail(@PathParam("reason") Reason reason) {
            throw new LockNotAcquiredException("report", Duration.ZERO, reason, null, "not acquired", null);
        }
    }
}
