package io.quarkiverse.mysqllock.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkus.test.junit.QuarkusTest;

/** @Locked REST endpoints keyed by a path parameter, blocking and reactive. */
@QuarkusTest
@EmbeddedMariaDb
class OrderResourceTest {

    @Test
    void concurrentRequestsForOneOrderConflictAndOtherOrdersProceed() throws Exception {
        for (String endpoint : new String[] { "ship", "ship-reactive" }) {
            String order = "o-" + endpoint;
            // held until released: the conflict and the other order are asked while it surely is
            try (HttpHold first = HttpHold.post("/orders/" + order + "/" + endpoint).awaitHeld("order:" + order)) {
                given().post("/orders/" + order + "/" + endpoint).then().statusCode(409)
                        .body("lock", equalTo("order:" + order)).body("reason", equalTo("BUSY"))
                        .body("message", containsString("is held by"));
                given().post("/orders/other-" + order + "/" + endpoint).then().statusCode(200);
                assertThat(first.release()).as(endpoint).isEqualTo(200);
            }
            given().post("/orders/" + order + "/" + endpoint).then().statusCode(200);
        }
    }

    @Test
    void theReactiveEndpointRunsOnTheEventLoop() {
        given().post("/orders/o-loop/ship-reactive").then().statusCode(200)
                .body("thread", startsWith("vert.x-eventloop-thread"));
        given().post("/orders/o-worker/ship").then().statusCode(200).body("thread", startsWith("executor-thread"));
    }
}
