package io.quarkiverse.mysqllock.deployment.fence;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.FenceGuard;
import io.quarkiverse.mysqllock.LockFence;
import io.quarkus.test.QuarkusUnitTest;

/** With in-memory locks, a service's fence keeps the newest tokens in memory, and refuses older ones the same way. */
class InMemoryFencedResourceTest {

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .withApplicationRoot(jar -> jar.addClasses(PlainOrders.class))
            .overrideConfigKey("quarkus.mysql-lock.in-memory", "true")
            .overrideConfigKey("quarkus.datasource.devservices.enabled", "false");

    @Inject
    FenceGuard guard;

    @Test
    void anOlderTokenIsRefused() {
        given().header(LockFence.HEADER, new LockFence("order:1", 4).headerValue()).when().post("/plain-orders/1").then()
                .statusCode(200);
        given().header(LockFence.HEADER, new LockFence("order:1", 3).headerValue()).when().post("/plain-orders/1").then()
                .statusCode(409).body("newest", equalTo(4));
        assertThat(guard.newest("order:1")).isEqualTo(4);
    }
}
