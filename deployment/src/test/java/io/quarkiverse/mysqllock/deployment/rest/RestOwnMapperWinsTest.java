package io.quarkiverse.mysqllock.deployment.rest;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;

import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** With the mapping on, an application's own mapper of the exception, at the default priority, still wins. */
class RestOwnMapperWinsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(RestExceptionMappingOffTest.Failing.class, OwnMapper.class)
            .overrideConfigKey("quarkus.mysql-lock.rest.map-exceptions", "true");

    @Test
    void theApplicationsMapperAnswers() {
        given().get("/failing/BUSY").then().statusCode(423).body(equalTo("own BUSY"));
    }

    @Provider
    public static class OwnMapper implements ExceptionMapper<LockNotAcquiredException> {
        @Override
        public Response toResponse(LockNotAcquiredException e) {
            return Response.status(423).entity("own " + e.reason()).build();
        }
    }
}
