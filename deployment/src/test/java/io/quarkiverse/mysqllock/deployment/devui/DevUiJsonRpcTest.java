package io.quarkiverse.mysqllock.deployment.devui;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.DevUiJsonRpc;
import io.quarkiverse.mysqllock.test.FreePorts;
import io.quarkiverse.mysqllock.test.HeadlessChromium;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.test.QuarkusDevModeTest;

/**
 * The Dev UI card's JSON-RPC methods, called over the Dev UI's WebSocket of an application in dev mode on the LEASE
 * engine that holds a lock from start-up: engine and reason, held locks, holders, and force-release of the lease.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DevUiJsonRpcTest {

    static final int PORT = FreePorts.take();
    static final String URL = "http://localhost:" + PORT;

    @RegisterExtension
    static final QuarkusDevModeTest app = new QuarkusDevModeTest()
            .withApplicationRoot(jar -> jar.addClasses(HeldFromStart.class)
                    .addAsResource(new StringAsset(properties()), "application.properties"));

    @Test
    @Order(2)
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

    /**
     * The card in a real browser (Debian's Chromium, headless): it renders in the Dev UI's extensions page with its
     * title and its page link, whose page shows the engine. The card's screenshot is the guide's
     * ({@code docs/modules/ROOT/assets/images/dev-ui-card.png}): every build refreshes it. It runs first, while the
     * application holds its one lock, so that the card's count, and so the picture, is the same at every build.
     */
    @Test
    @Order(1)
    void theCardAndItsPageRenderInARealBrowser() throws Exception {
        HeadlessChromium.requiredOrSkipped();
        try (HeadlessChromium browser = HeadlessChromium.start(1400, 1000)) {
            browser.open(URL + "/q/dev-ui/extensions");
            JsonNode card = rendered(browser, "MySQL Lock", "Distributed locks");
            assertThat(card.get("text").asText()).contains("MySQL Lock").contains("Distributed locks");
            Path images = Path.of("..", "docs", "modules", "ROOT", "assets", "images");
            Files.write(images.resolve("dev-ui-card.png"),
                    HeadlessChromium.checkedPng(browser.screenshot(card.get("x").asDouble(),
                            card.get("y").asDouble(), card.get("width").asDouble(), card.get("height").asDouble())));
            browser.open(page(card, "distributed-locks"));
            JsonNode page = rendered(browser, "Datasource", "LEASE");
            assertThat(page.get("text").asText()).contains("<default>").contains("LEASE");
            // the page shows times: its picture goes to target/, for a look, not into the repository
            Files.write(Path.of("target", "dev-ui-locks.png"),
                    HeadlessChromium.checkedPng(browser.screenshot(0, 0, 1400, 700)));
        }
    }

    /** The URL of one of the card's pages, by its id (its title in lower case, words joined by hyphens). */
    static String page(JsonNode card, String id) {
        String link = card.get("href").asText();
        return link.substring(0, link.lastIndexOf('/') + 1) + id;
    }

    /**
     * The smallest card-sized element whose text, shadow roots included, has every one of the texts, with its box and
     * the first link in it; polled until the page's scripts rendered it.
     */
    static JsonNode rendered(HeadlessChromium browser, String... texts) throws Exception {
        String wanted = java.util.Arrays.stream(texts).map(text -> "'" + text + "'")
                .collect(java.util.stream.Collectors.joining(","));
        String find = """
                (() => {
                  const wanted = [%s];
                  const all = [];
                  const walk = root => { for (const el of root.querySelectorAll('*')) { all.push(el);
                    if (el.shadowRoot) walk(el.shadowRoot); } };
                  walk(document);
                  const deep = el => { let text = ''; let link = null; const stack = [el];
                    while (stack.length) { const e = stack.pop();
                      if (e.nodeType === 3) { text += e.textContent + ' '; continue; }
                      if (!link && e.tagName === 'A' && e.href) link = e.href;
                      if (e.shadowRoot) stack.push(...e.shadowRoot.childNodes);
                      stack.push(...(e.childNodes || [])); }
                    return { text: text.replace(/\s+/g, ' ').trim(), link }; };
                  let best = null;
                  for (const el of all) {
                    const box = el.getBoundingClientRect();
                    if (box.width < 150 || box.height < 60) continue;
                    const content = deep(el);
                    if (!wanted.every(w => content.text.includes(w))) continue;
                    if (!best || box.width * box.height < best.width * best.height) {
                      best = { x: box.x, y: box.y, width: box.width, height: box.height, text: content.text,
                               href: content.link };
                    }
                  }
                  return best;
                })()""".formatted(wanted);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        JsonNode found = browser.evaluate(find);
        while (found.isNull() || found.isMissingNode()) {
            assertThat(System.nanoTime()).as("rendered within 60 s: " + wanted).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(200); // polling the page's rendering: nothing to wait on
            found = browser.evaluate(find);
        }
        return found;
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

    @ApplicationScoped
    public static class HeldFromStart {
        /** Kept: a handle nobody references is released as leaked once the garbage collector finds it. */
        static volatile LockHandle held;

        void start(@Observes StartupEvent event, LockManager locks) {
            held = locks.acquire("devui:held");
        }
    }
}
