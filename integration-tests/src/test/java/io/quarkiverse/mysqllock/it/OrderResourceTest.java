package io.quarkiverse.mysqllock.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
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
            CompletableFuture<Integer> first = Background.supply(
                    () -> given().post("/orders/" + order + "/" + endpoint + "?holdMs=1500").statusCode());
            awaitHeld("order:" + order);
            given().post("/orders/" + order + "/" + endpoint).then().statusCode(409)
                    .body("lock", equalTo("order:" + order)).body("reason", equalTo("BUSY"))
                    .body("message", containsString("is held by"));
            given().post("/orders/other-" + order + "/" + endpoint).then().statusCode(200);
            assertThat(first.get(30, TimeUnit.SECONDS)).as(endpoint).isEqualTo(200);
            given().post("/orders/" + order + "/" + endpoint).then().statusCode(200);
        }
    }

    @Test
    void theReactiveEndpointRunsOnTheEventLoop() {
        given().post("/orders/o-loop/ship-reactive").then().statusCode(200)
                .body("thread", startsWith("vert.x-eventloop-thread"));
        given().post("/orders/o-worker/ship").then().statusCode(200).body("thread", startsWith("executor-thread"));
    }

    private static void awaitHeld(String name) {
        Await.until(name + " to be held", Duration.ofSeconds(5), () -> given().get("/locks/" + name).statusCode() == 200);
    }
}
