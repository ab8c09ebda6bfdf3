package io.quarkiverse.mysqllock.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkus.test.junit.QuarkusTest;

/** Lock metrics scraped from the Prometheus endpoint: by outcome, engine and datasource, never by lock name. */
@QuarkusTest
@EmbeddedMariaDb
class MetricsTest {

    private static final String TAGS = "datasource=\"<default>\",engine=\"named\"";

    @Test
    void acquisitionsWaitsHoldsAndGaugesAreScraped() throws Exception {
        double acquiredBefore = value("mysql_lock_acquisitions_total", TAGS + ",outcome=\"acquired\"");
        double busyBefore = value("mysql_lock_acquisitions_total", TAGS + ",outcome=\"busy\"");

        // held until released (the scrapes below take what a busy machine makes them take), and 1.5 s at least: the
        // hold time asserted below
        try (HttpHold hold = HttpHold.post("/locks/metrics:hot?holdMs=1500").awaitHeld("metrics:hot")) {
            assertThat(value("mysql_lock_held", TAGS)).isGreaterThanOrEqualTo(1);
            assertThat(value("mysql_lock_pinned_connections", TAGS)).isGreaterThanOrEqualTo(1);
            given().post("/locks/metrics:hot").then().statusCode(409);
            assertThat(hold.release()).isEqualTo(200);
        }

        String scrape = scrape();
        assertThat(value("mysql_lock_acquisitions_total", TAGS + ",outcome=\"acquired\"")).isEqualTo(acquiredBefore + 1);
        assertThat(value("mysql_lock_acquisitions_total", TAGS + ",outcome=\"busy\"")).isEqualTo(busyBefore + 1);
        assertThat(scrape).contains("mysql_lock_wait_seconds_bucket{" + TAGS + ",outcome=\"acquired\"")
                .contains("mysql_lock_hold_seconds_count{" + TAGS + "}");
        assertThat(value("mysql_lock_hold_seconds_max", TAGS)).isGreaterThanOrEqualTo(1.4);
        assertThat(scrape).as("no lock names as tags").doesNotContain("metrics:hot");
    }

    @Test
    void lockedMethodsAreCountedByMethodAndOutcomeNeverByLockName() throws Exception {
        String ship = "datasource=\"<default>\",method=\"" + OrderResource.class.getName() + "#ship\"";
        String shipReactive = "datasource=\"<default>\",method=\"" + OrderResource.class.getName() + "#shipReactive\"";
        double ranBefore = value("mysql_lock_method_seconds_count", ship + ",outcome=\"ran\"");
        double notAcquiredBefore = value("mysql_lock_method_seconds_count", ship + ",outcome=\"not_acquired\"");
        double reactiveBefore = value("mysql_lock_method_seconds_count", shipReactive + ",outcome=\"ran\"");

        // held until released, and 1.5 s at least: the method time asserted below
        try (HttpHold hold = HttpHold.post("/orders/metrics-7/ship?holdMs=1500").awaitHeld("order:metrics-7")) {
            given().post("/orders/metrics-7/ship").then().statusCode(409);
            assertThat(hold.release()).isEqualTo(200);
        }
        given().post("/orders/metrics-8/ship-reactive").then().statusCode(200);

        assertThat(value("mysql_lock_method_seconds_count", ship + ",outcome=\"ran\"")).isEqualTo(ranBefore + 1);
        assertThat(value("mysql_lock_method_seconds_count", ship + ",outcome=\"not_acquired\""))
                .isEqualTo(notAcquiredBefore + 1);
        assertThat(value("mysql_lock_method_seconds_max", ship + ",outcome=\"ran\"")).isGreaterThanOrEqualTo(1.4);
        assertThat(value("mysql_lock_method_seconds_count", shipReactive + ",outcome=\"ran\""))
                .isEqualTo(reactiveBefore + 1);
        assertThat(scrape()).as("no resolved lock names as tags").doesNotContain("metrics-7").doesNotContain("metrics-8");
    }

    private static String scrape() {
        return given().get("/q/metrics").then().statusCode(200).extract().asString();
    }

    private static double value(String metric, String tags) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(metric + "{" + tags + "}") + " (\\S+)$").matcher(scrape());
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }
}
