package io.quarkiverse.mysqllock.it;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkus.test.junit.QuarkusTest;

/** The locks' readiness check over HTTP. */
@QuarkusTest
@EmbeddedMariaDb
class HealthTest {

    @Test
    void readinessReportsTheEngineAndWhyItWasChosen() {
        given().get("/q/health/ready").then().statusCode(200)
                .body("status", equalTo("UP"))
                .body("checks.name", hasItem("MySQL/MariaDB distributed locks"))
                .body("checks.find { it.name == 'MySQL/MariaDB distributed locks' }.data.engine", equalTo("NAMED"))
                .body("checks.find { it.name == 'MySQL/MariaDB distributed locks' }.data.'engine chosen because'",
                        containsString("no replication"));
    }
}
