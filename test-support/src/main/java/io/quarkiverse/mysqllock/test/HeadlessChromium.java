package io.quarkiverse.mysqllock.test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Debian's Chromium, headless, driven through the DevTools protocol (no driver, no downloaded browser): for tests that
 * render a page for real, such as the Dev UI card. Installed with apt-get when absent and the build runs as root.
 */
public final class HeadlessChromium implements AutoCloseable {

    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Optional<String> unavailable;

    private final Process process;
    private final Path profile;
    private final JsonWebSocket socket;

    /** Why Chromium cannot run here, or empty: installs it first where it can. */
    public static synchronized Optional<String> unavailable() {
        if (unavailable == null) {
            unavailable = Files.isExecutable(CHROMIUM) ? Optional.empty()
                    : AptPackages.install("headless browser", "chromium")
                            .or(() -> Files.isExecutable(CHROMIUM) ? Optional.empty()
                                    : Optional.of("chromium was installed, but " + CHROMIUM + " is missing"));
        }
        return unavailable;
    }

    /**
     * For a test that needs the browser: returns once it can run; skips the test (a JUnit assumption) where it cannot,
     * with the reason, except under {@code CI=true}, where CI must have it: the test fails then.
     */
    public static void requiredOrSkipped() {
        Optional<String> reason = unavailable();
        if (reason.isEmpty()) {
            return;
        }
        if ("true".equals(System.getenv("CI"))) {
            throw new AssertionError("A headless browser, which CI must have: " + reason.get());
        }
        org.junit.jupiter.api.Assumptions.abort(reason.get());
    }

    /** The PNG of a screenshot, checked to be a picture: of some size, and not of one colour. */
    public static byte[] checkedPng(byte[] png) throws IOException {
        java.awt.image.BufferedImage image = javax.imageio.ImageIO.read(new java.io.ByteArrayInputStream(png));
        if (image == null || image.getWidth() <= 100 || image.getHeight() <= 50) {
            throw new AssertionError("Not a screenshot: " + (image == null ? "no PNG"
                    : image.getWidth() + "x" + image.getHeight() + " pixels"));
        }
        java.util.Set<Integer> colours = new java.util.HashSet<>();
        for (int x = 0; x < image.getWidth(); x += 3) {
            for (int y = 0; y < image.getHeight(); y += 3) {
                colours.add(image.getRGB(x, y));
            }
        }
        if (colours.size() <= 10) {
            throw new AssertionError("A screenshot of " + colours.size() + " colours: nothing rendered");
        }
        return png;
    }

    /** Starts a browser with an empty profile and a window of this size, on one blank page. */
    public static HeadlessChromium start(int width, int height) throws Exception {
        unavailable().ifPresent(reason -> {
            throw new IllegalStateException(reason);
        });
        return new HeadlessChromium(width, height);
    }

    private HeadlessChromium(int width, int height) throws Exception {
        profile = Files.createTempDirectory("mlk-chromium");
        process = new ProcessBuilder(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--hide-scrollbars", "--remote-allow-origins=*", "--user-data-dir=" + profile,
                "--window-size=" + width + "," + height, "--remote-debugging-port=0", "about:blank")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String browserSocket = devToolsAddress();
        String port = URI.create(browserSocket).getPort() + "";
        HttpResponse<String> targets = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list")).build(),
                HttpResponse.BodyHandlers.ofString());
        String pageSocket = null;
        for (JsonNode target : JSON.readTree(targets.body())) {
            if (target.path("type").asText().equals("page")) {
                pageSocket = target.path("webSocketDebuggerUrl").asText();
                break;
            }
        }
        if (pageSocket == null) {
            close();
            throw new IllegalStateException("Chromium opened no page: " + targets.body());
        }
        socket = new JsonWebSocket(URI.create(pageSocket), Duration.ofSeconds(30));
    }

    /** The browser prints its DevTools address on its standard error once it listens. */
    private String devToolsAddress() throws IOException {
        BufferedReader errors = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8));
        StringBuilder seen = new StringBuilder();
        String line;
        while ((line = errors.readLine()) != null) {
            int at = line.indexOf("ws://");
            if (line.startsWith("DevTools listening on") && at >= 0) {
                Thread drain = new Thread(() -> errors.lines().forEach(ignored -> {
                }), "chromium-stderr");
                drain.setDaemon(true);
                drain.start();
                return line.substring(at).strip();
            }
            seen.append(line).append('\n');
        }
        throw new IllegalStateException("Chromium ended before it listened:\n" + seen);
    }

    /** Opens the address; the page goes on loading and rendering after it: poll for what it shows. */
    public void open(String url) throws Exception {
        call("Page.enable", JSON.createObjectNode());
        call("Page.navigate", JSON.createObjectNode().put("url", url));
    }

    /** Evaluates a JavaScript expression in the page (awaiting a promise) and returns its value as JSON. */
    public JsonNode evaluate(String expression) throws Exception {
        JsonNode result = call("Runtime.evaluate", JSON.createObjectNode().put("expression", expression)
                .put("returnByValue", true).put("awaitPromise", true));
        if (result.has("exceptionDetails")) {
            throw new IllegalStateException("The page's script failed: " + result.get("exceptionDetails"));
        }
        return result.path("result").path("value");
    }

    /** A PNG of this part of the page, in CSS pixels. */
    public byte[] screenshot(double x, double y, double width, double height) throws Exception {
        ObjectNode clip = JSON.createObjectNode().put("x", x).put("y", y).put("width", width).put("height", height)
                .put("scale", 1);
        ObjectNode params = JSON.createObjectNode().put("format", "png");
        params.set("clip", clip);
        return Base64.getDecoder().decode(call("Page.captureScreenshot", params).path("data").asText());
    }

    private JsonNode call(String method, ObjectNode params) throws Exception {
        ObjectNode request = JSON.createObjectNode().put("method", method);
        request.set("params", params);
        JsonNode reply = socket.call(request, Duration.ofSeconds(60));
        if (reply.has("error")) {
            throw new IllegalStateException(method + " failed: " + reply.get("error"));
        }
        return reply.path("result");
    }

    @Override
    public void close() {
        if (socket != null) {
            socket.close();
        }
        // its helpers (renderer, GPU, zygote) first: they outlive the browser for a moment, writing into the profile
        java.util.List<ProcessHandle> helpers = process.descendants().toList();
        helpers.forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
            for (ProcessHandle helper : helpers) {
                helper.onExit().get(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            // a helper still running: its files may be left behind
        }
        try (var files = Files.walk(profile)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException | java.io.UncheckedIOException e) {
            // a temporary directory left behind (a file vanished under the walk): the test is not about it
        }
    }
}
