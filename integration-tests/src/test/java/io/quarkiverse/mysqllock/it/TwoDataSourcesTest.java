package io.quarkiverse.mysqllock.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * Two datasources over HTTP: the default one (a plain URL, NAMED) and "orders" in a database of its own, whose URL has
 * driver auto-reconnect on (LEASE). Each has its own lock manager, engine decision, lock table and readiness data.
 */
@QuarkusTest
@TestProfile(TwoDataSourcesTest.Profile.class)
class TwoDataSourcesTest {

    static final String ORDERS_SCHEMA = "orders_locks";

    @Test
    void eachDataSourceLocksWithItsOwnEngineAndTable() {
        given().post("/datasources/<default>/locks/two-ds:order-1").then().statusCode(200)
                .body("engine", equalTo("NAMED"));
        given().post("/datasources/orders/locks/two-ds:order-1").then().statusCode(200)
                .body("engine", equalTo("LEASE")).body("fence", equalTo(1));
        given().post("/datasources/orders/locks/two-ds:order-1").then().statusCode(200).body("fence", equalTo(2));

        TestDatabase db = TestDatabase.shared();
        assertThat(db.queryLong("SELECT fence FROM " + ORDERS_SCHEMA + ".mysql_lock WHERE name = 'two-ds:order-1'"))
                .as("the orders datasource's own lock table").isEqualTo(2);

        given().get("/q/health/ready").then().statusCode(200)
                .body("checks.find { it.name == 'MySQL/MariaDB distributed locks' }.data.'<default>: engine'",
                        equalTo("NAMED"))
                .body("checks.find { it.name == 'MySQL/MariaDB distributed locks' }.data.'orders: engine'",
                        equalTo("LEASE"));

        given().post("/datasources/billing/locks/x").then().statusCode(404);
    }

    public static class Profile implements QuarkusTestProfile {

        @Override
        public Map<String, String> getConfigOverrides() {
            TestDatabase db = TestDatabase.shared();
            db.execute("CREATE DATABASE IF NOT EXISTS " + ORDERS_SCHEMA);
            Map<String, String> config = new HashMap<>(db.quarkusConfig());
            config.put("quarkus.datasource.orders.db-kind", "mysql");
            config.put("quarkus.datasource.orders.jdbc.url", db.jdbcUrl().replaceFirst("/[^/?]*(\\?|$)",
                    "/" + ORDERS_SCHEMA + "$1"));
            config.put("quarkus.datasource.orders.username", db.user());
            config.put("quarkus.datasource.orders.password", db.password());
            config.put("quarkus.datasource.orders.devservices.enabled", "false");
            config.put("quarkus.datasource.orders.jdbc.additional-jdbc-properties.autoReconnect", "true");
            return config;
        }
    }
}
