package io.quarkiverse.mysqllock.deployment.devui;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.DevUiJsonRpc;
import io.quarkiverse.mysqllock.test.FreePorts;
import io.quarkiverse.mysqllock.test.HeadlessChromium;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusDevModeTest;

/**
 * The Dev UI's scheduled-jobs page of an application in dev mode with a job ticking every second: the page renders in
 * a real browser with the job, its state and its buttons; its JSON-RPC methods list the job with its runs, and pause,
 * resume and run it now, each recorded as done by the Dev UI.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DevUiJobsTest {

    static final int PORT = FreePorts.take();
    static final String URL = "http://localhost:" + PORT;

    @RegisterExtension
    static final QuarkusDevModeTest app = new QuarkusDevModeTest()
            .withApplicationRoot(jar -> jar.addClasses(EverySecond.class)
                    .addAsResource(new StringAsset(properties()), "application.properties"));

    @Test
    @Order(1)
    void thePageRendersTheJobInARealBrowser() throws Exception {
        HeadlessChromium.requiredOrSkipped();
        try (DevUiJsonRpc devUi = new DevUiJsonRpc(URL, "quarkus-mysql-lock")) {
            Await.until("the job's first tick", Duration.ofSeconds(60), () -> !runs(devUi).isEmpty());
        }
        try (HeadlessChromium browser = HeadlessChromium.start(1400, 1000)) {
            browser.open(URL + "/q/dev-ui/extensions");
            JsonNode card = DevUiJsonRpcTest.rendered(browser, "MySQL Lock", "Scheduled jobs");
            browser.open(DevUiJsonRpcTest.page(card, "scheduled-jobs"));
            JsonNode page = DevUiJsonRpcTest.rendered(browser, "devui:every-second", "ACTIVE", "Run now", "Pause");
            assertThat(page.get("text").asText()).contains("SUCCEEDED").contains("SCHEDULED");
            Files.write(Path.of("target", "dev-ui-jobs.png"),
                    HeadlessChromium.checkedPng(browser.screenshot(0, 0, 1400, 800)));
        }
    }

    @Test
    @Order(2)
    void listsTheJobAndPausesResumesAndRunsItNow() throws Exception {
        try (DevUiJsonRpc devUi = new DevUiJsonRpc(URL, "quarkus-mysql-lock")) {
            Await.until("the job's first tick", Duration.ofSeconds(60), () -> !runs(devUi).isEmpty());
            JsonNode paused = devUi.call("changeJob", Map.of("datasource", "<default>", "job", "devui:every-second",
                    "action", "pause"));
            assertThat(paused.get("done").asBoolean()).as(paused.toString()).isTrue();
            assertThat(paused.get("message").asText()).contains("PAUSED");
            Await.until("a tick skipped while paused", Duration.ofSeconds(60),
                    () -> runs(devUi).stream().anyMatch(run -> run.equals("SCHEDULED SKIPPED_PAUSED")));
            JsonNode ranNow = devUi.call("changeJob", Map.of("datasource", "<default>", "job", "devui:every-second",
                    "action", "run-now"));
            assertThat(ranNow.get("message").asText()).as(ranNow.toString()).contains("ran now: SUCCEEDED");
            assertThat(runs(devUi)).contains("RUN_NOW SUCCEEDED");
            JsonNode resumed = devUi.call("changeJob", Map.of("datasource", "<default>", "job", "devui:every-second",
                    "action", "resume"));
            assertThat(resumed.get("message").asText()).contains("ACTIVE");
            JsonNode job = job(devUi);
            List<String> changes = new ArrayList<>();
            job.get("changes").forEach(change -> changes.add(change.get("action").asText() + " by "
                    + change.get("by").asText()));
            assertThat(changes).containsExactly("RESUME by Dev UI", "RUN_NOW by Dev UI", "PAUSE by Dev UI");
            JsonNode wrong = devUi.call("changeJob", Map.of("datasource", "<default>", "job", "devui:every-second",
                    "action", "explode"));
            assertThat(wrong.get("done").asBoolean()).isFalse();
            assertThat(wrong.get("message").asText()).contains("No action 'explode'");
        }
    }

    private static JsonNode job(DevUiJsonRpc devUi) {
        try {
            for (JsonNode job : devUi.call("getJobs").get(0).get("jobs")) {
                if (job.get("name").asText().equals("devui:every-second")) {
                    return job;
                }
            }
            return null;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The job's recent runs, as kind and outcome. */
    private static List<String> runs(DevUiJsonRpc devUi) {
        List<String> runs = new ArrayList<>();
        JsonNode job = job(devUi);
        if (job != null) {
            job.get("runs").forEach(run -> runs.add(run.get("kind").asText() + " " + run.get("outcome").asText()));
        }
        return runs;
    }

    private static String properties() {
        StringBuilder properties = new StringBuilder();
        TestDatabase.shared().quarkusConfig().forEach((key, value) -> properties.append(key).append('=')
                .append(value).append('\n'));
        return properties.append("quarkus.datasource.db-kind=mysql\n")
                .append("quarkus.http.port=").append(PORT).append('\n')
                .append("quarkus.log.category.\"ch.vorburger\".level=WARN\n").toString();
    }

    @ApplicationScoped
    public static class EverySecond {

        @Scheduled(every = "1s")
        @Locked(value = "devui:every-second", onBusy = OnBusy.SKIP)
        void tick(ScheduledExecution execution) {
        }
    }
}
