package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.AppProcess;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The application starts while its database is unreachable: readiness is DOWN with the reason and locks fail with a
 * clear error; once the database answers, readiness comes UP and locks work, without a restart.
 */
class DatabaseDownAtStartIT {

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void startsWithTheDatabaseDownAndRecovers() throws Exception {
        TestDatabase db = TestDatabase.shared();
        try (TcpProxy proxy = TcpProxy.start("down-at-start", db.port())) {
            proxy.cut();
            try (AppProcess app = Workers.start(db.via(proxy), "down-at-start", Map.of(), null)) {
                int port = Workers.httpPort(app);

                HttpResponse<String> down = send(port, "GET", "/q/health/ready");
                assertThat(down.statusCode()).isEqualTo(503);
                assertThat(down.body()).contains("\"DOWN\"").contains("could not be chosen");
                HttpResponse<String> refused = send(port, "POST", "/locks/it:down");
                assertThat(refused.statusCode()).isEqualTo(503);
                assertThat(refused.body()).contains("DATABASE_ERROR").contains("it:down");

                proxy.heal();
                Await.until("readiness to come UP", Duration.ofSeconds(30),
                        () -> send(port, "GET", "/q/health/ready").statusCode() == 200);
                assertThat(send(port, "GET", "/q/health/ready").body()).contains("\"UP\"").contains("NAMED");
                HttpResponse<String> held = send(port, "POST", "/locks/it:down");
                assertThat(held.statusCode()).isEqualTo(200);
                assertThat(held.body()).contains("fencingToken");
            }
        }
    }

    private HttpResponse<String> send(int port, String method, String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
