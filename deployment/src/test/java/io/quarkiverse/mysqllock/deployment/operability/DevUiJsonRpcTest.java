package io.quarkiverse.mysqllock.deployment.operability;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.DevUiJsonRpc;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.test.QuarkusDevModeTest;

/**
 * The Dev UI card's JSON-RPC methods, called over the Dev UI's WebSocket of an application in dev mode on the LEASE
 * engine that holds a lock from start-up: engine and reason, held locks, holders, and force-release of the lease.
 */
class DevUiJsonRpcTest {

    static final int PORT = freePort();
    static final String URL = "http://localhost:" + PORT;

    @RegisterExtension
    static final QuarkusDevModeTest app = new QuarkusDevModeTest()
            .withApplicationRoot(jar -> jar.addClasses(HeldFromStart.class)
                    .addAsResource(new StringAsset(properties()), "application.properties"));

    @Test
    void showsEngineHeldLocksAndHoldersAndForceReleasesALease() throws Exception {
        HttpResponse<String> component = HttpClient.newHttpClient().send(HttpRequest
                .newBuilder(URI.create(URL + "/q/dev-ui/quarkus-mysql-lock/qwc-mysql-lock-locks.js")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(component.statusCode()).as("the card's web component is served").isEqualTo(200);
        assertThat(component.body()).contains("customElements.define('qwc-mysql-lock-locks'");
        try (DevUiJsonRpc devUi = new DevUiJsonRpc(URL, "quarkus-mysql-lock")) {
            JsonNode managers = devUi.call("getManagers");
            assertThat(managers).hasSize(1);
            JsonNode manager = managers.get(0);
            assertThat(manager.get("datasource").asText()).isEqualTo("<default>");
            assertThat(manager.get("engine").asText()).isEqualTo("LEASE");
            assertThat(manager.get("reason").asText()).contains("quarkus.mysql-lock.mode=lease");
            assertThat(manager.get("up").asBoolean()).isTrue();
            assertThat(names(manager.get("held"))).containsExactly("devui:held");
            assertThat(names(manager.get("holders"))).contains("devui:held");
            assertThat(manager.get("held").get(0).get("fencingToken").asLong()).isPositive();
            assertThat(devUi.call("getHeldCount").asText()).isEqualTo("1");

            JsonNode released = devUi.call("forceRelease", Map.of("datasource", "<default>", "name", "devui:held"));
            assertThat(released.get("released").asBoolean()).as(released.toString()).isTrue();
            assertThat(names(devUi.call("getManagers").get(0).get("holders"))).doesNotContain("devui:held");
            Await.until("the holder to learn it lost the lease", Duration.ofSeconds(20),
                    () -> names(call(devUi, "getManagers").get(0).get("held")).isEmpty());

            JsonNode again = devUi.call("forceRelease", Map.of("datasource", "<default>", "name", "devui:held"));
            assertThat(again.get("released").asBoolean()).isFalse();
            assertThat(again.get("message").asText()).contains("No lease 'devui:held'");
            JsonNode unknown = devUi.call("forceRelease", Map.of("datasource", "orders", "name", "devui:held"));
            assertThat(unknown.get("released").asBoolean()).isFalse();
            assertThat(unknown.get("message").asText()).contains("datasource 'orders'");
        }
    }

    private static JsonNode call(DevUiJsonRpc devUi, String method) {
        try {
            return devUi.call(method);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> names(JsonNode locks) {
        List<String> names = new ArrayList<>();
        locks.forEach(lock -> names.add(lock.get("name").asText()));
        return names;
    }

    private static String properties() {
        StringBuilder properties = new StringBuilder();
        TestDatabase.shared().quarkusConfig().forEach((key, value) -> properties.append(key).append('=')
                .append(value).append('\n'));
        return properties.append("quarkus.datasource.db-kind=mysql\n")
                .append("quarkus.mysql-lock.mode=lease\n")
                .append("quarkus.http.port=").append(PORT).append('\n')
                .append("quarkus.log.category.\"ch.vorburger\".level=WARN\n").toString();
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @ApplicationScoped
    public static class HeldFromStart {

        void start(@Observes StartupEvent event, LockManager locks) {
            locks.acquire("devui:held");
        }
    }
}
