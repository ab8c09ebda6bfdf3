package io.quarkiverse.mysqllock.deployment.rest;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.nullValue;

import java.time.Duration;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockNotAcquiredException.Reason;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code quarkus.mysql-lock.rest.map-exceptions=true}: a {@code LockNotAcquiredException} escaping a resource method is
 * answered through a real HTTP call with the status, {@code Retry-After} and JSON body the guide gives, and an
 * application's own mapper of it wins; without the property it stays a 500.
 */
class RestExceptionMappingTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Orders.class)
            .overrideConfigKey("quarkus.mysql-lock.rest.map-exceptions", "true");

    @Inject
    LockManager locks;

    @Test
    void aBusyLockIsAConflictNamingTheLockButNotItsHolder() {
        try (LockHandle held = locks.acquire("order:1001", Duration.ofSeconds(5))) {
            given().post("/orders/1001").then().statusCode(409).contentType("application/json")
                    .header("Retry-After", nullValue()).body("lock", equalTo("order:1001")).body("reason", equalTo("BUSY"))
                    // the time the caller waited, measured: a few milliseconds on a busy machine
                    .body("waitedMs", allOf(greaterThanOrEqualTo(0), lessThan(5_000))).body("holder", nullValue());
        }
        given().post("/orders/1001").then().statusCode(200).body(equalTo("shipped 1001"));
    }

    @Test
    void everyReasonHasItsStatusAndRetryAfter() {
        expect(Reason.DEADLOCK, 409, null);
        expect(Reason.POOL_EXHAUSTED, 503, "1");
        expect(Reason.DATABASE_ERROR, 503, "5");
        expect(Reason.READ_ONLY, 503, "5");
    }

    @Test
    void aLockNameIsEscapedInTheJsonBody() {
        String name = "quote\" backslash\\ tab\t end";
        given().queryParam("name", name).get("/orders/fail/BUSY").then().statusCode(409).body("lock", equalTo(name))
                .body("waitedMs", equalTo(7));
    }

    private static void expect(Reason reason, int status, String retryAfter) {
        given().queryParam("name", "report").get("/orders/fail/" + reason).then().statusCode(status)
                .header("Retry-After", retryAfter == null ? nullValue() : equalTo(retryAfter))
                .body("reason", equalTo(reason.name())).body("lock", equalTo("report"));
    }

    @Path("/orders")
    public static class Orders {

        @POST
        @Path("{id}")
        @Locked("order:{id}")
        public String ship(@PathParam("id") String id) {
            return "shipped " + id;
        }

        @GET
        @Path("fail/{reason}")
        public String fail(@PathParam("reason") Reason reason, @QueryParam("name") String name) {
            throw new LockNotAcquiredException(name, Duration.ofMillis(7), reason, "host-1/42/abc", "not acquired",
                    null);
        }
    }
}
