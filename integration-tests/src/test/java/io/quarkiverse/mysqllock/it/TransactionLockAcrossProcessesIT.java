package io.quarkiverse.mysqllock.it;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;

/** @Transactional endpoints of two JVMs take acquireForTransaction on one name: their transactions never overlap. */
class TransactionLockAcrossProcessesIT {

    @Test
    void transactionsOfTwoProcessesSerializeOnTheRowLock() throws Exception {
        TestDatabase db = TestDatabase.shared();
        db.execute("CREATE TABLE IF NOT EXISTS tx_history (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(200) NOT NULL,"
                + " instance VARCHAR(100) NOT NULL, started_at DATETIME(6) NOT NULL, ended_at DATETIME(6) NULL)");
        try (AppProcess first = Workers.start(db, "tx-a", Map.of(), null);
                AppProcess second = Workers.start(db, "tx-b", Map.of(), null)) {
            int[] ports = { Workers.httpPort(first), Workers.httpPort(second) };

            List<CompletableFuture<Integer>> requests = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                int port = ports[i % 2];
                requests.add(Background.supply(() -> given().port(port)
                        .post("/tx-locks/tx:order-7?waitMs=30000&holdMs=150").statusCode()));
            }
            for (CompletableFuture<Integer> request : requests) {
                assertThat(request.get(60, TimeUnit.SECONDS)).isEqualTo(200);
            }

            // Held by one process until the test releases it (over HTTP, to that process), refused at once to the other.
            // The holder's insert is not committed yet: read it uncommitted.
            String holderStarted = "SELECT COUNT(*) FROM tx_history WHERE name = 'tx:order-8'";
            try (HttpHold holding = HttpHold.post(ports[0], "/tx-locks/tx:order-8")
                    .awaitHeld("the holder's transaction to start", () -> uncommitted(db, holderStarted) > 0)) {
                given().port(ports[1]).post("/tx-locks/tx:order-8").then().statusCode(409);
                assertThat(holding.release()).isEqualTo(200);
            }
        }

        assertThat(db.queryLong("SELECT COUNT(*) FROM tx_history WHERE name = 'tx:order-7'")).isEqualTo(8);
        assertThat(db.queryLong("SELECT COUNT(DISTINCT instance) FROM tx_history WHERE name = 'tx:order-7'")).isEqualTo(2);
        assertThat(db.queryLong("SELECT COUNT(*) FROM tx_history a JOIN tx_history b ON a.id < b.id AND a.name = b.name"
                + " WHERE a.name = 'tx:order-7' AND a.started_at < b.ended_at AND b.started_at < a.ended_at"))
                .as("overlapping transactions").isZero();
    }

    private static long uncommitted(TestDatabase db, String sql) {
        try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
            statement.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED");
            ResultSet rs = statement.executeQuery(sql);
            rs.next();
            return rs.getLong(1);
        } catch (java.sql.SQLException e) {
            return 0;
        }
    }

}
