package io.quarkiverse.mysqllock.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.startsWith;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
@EmbeddedMariaDb
class LockResourceTest {

    @Test
    void aFreeLockIsNotFoundAndAHeldOneIsDescribed() throws Exception {
        given().get("/locks/rest:inspect").then().statusCode(404);
        // held until released: the questions below may take as long as a busy machine makes them
        try (HttpHold hold = HttpHold.post("/locks/rest:inspect").awaitHeld("rest:inspect")) {
            given().get("/locks/rest:inspect").then().statusCode(200)
                    .body("name", equalTo("rest:inspect"))
                    .body("mode", equalTo("NAMED"))
                    .body("holder", containsString("/" + ProcessHandle.current().pid() + "/"));
            assertThat(hold.release()).isEqualTo(200);
        }
    }

    @Test
    void concurrentRequestsOnOneKeyConflict() throws Exception {
        try (HttpHold hold = HttpHold.post("/locks/rest:order-1").awaitHeld("rest:order-1")) {
            given().post("/locks/rest:order-1").then().statusCode(409)
                    .body("lock", equalTo("rest:order-1"))
                    .body("reason", equalTo("BUSY"))
                    .body("holder", containsString("thread"));
            // another key is independent
            given().post("/locks/rest:order-2").then().statusCode(200).body("fencingToken", greaterThan(0));
            assertThat(hold.release()).isEqualTo(200);
        }
        // and a request that waits gets it after the holder finishes
        given().post("/locks/rest:order-1?waitMs=5000").then().statusCode(200);
    }

    @Test
    void manyConcurrentRequestsThatWaitAllSucceedOneAfterAnother() throws Exception {
        List<CompletableFuture<Integer>> requests = java.util.stream.IntStream.range(0, 8)
                .mapToObj(i -> Background.supply(
                        () -> given().post("/locks/rest:serial?waitMs=20000&holdMs=50").statusCode()))
                .toList();
        for (CompletableFuture<Integer> request : requests) {
            assertThat(request.get()).isEqualTo(200);
        }
    }

    @Test
    void theFirstNamedFencingTokenIsRefusedOnTheEventLoop() {
        given().get("/locks/rest:loop-fence/fence-on-event-loop").then().statusCode(200)
                .body(containsString("event-loop thread")).body(containsString("emitOn"));
    }

    @Test
    void theReactiveEndpointAcquiresWithoutBlockingTheEventLoop() {
        given().get("/locks/rest:async/async").then().statusCode(200)
                .body("lock", equalTo("rest:async"))
                .body("thread", startsWith("executor-thread"));
    }

    @Test
    void theBlockingApiRefusesToRunOnTheEventLoop() {
        given().get("/locks/rest:loop/blocking-on-event-loop").then().statusCode(200)
                .body(containsString("event-loop thread")).body(containsString("acquireAsync"));
    }
}
