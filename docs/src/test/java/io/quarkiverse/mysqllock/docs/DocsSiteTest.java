package io.quarkiverse.mysqllock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;

import io.quarkiverse.mysqllock.test.AptPackages;
import io.quarkiverse.mysqllock.test.HeadlessChromium;

/**
 * The guide as a site: Antora (from the npm registry, with the UI under {@code ui/}) builds it from this working tree
 * with any warning fatal (a broken xref, a missing include or image); every link and anchor of the built pages resolves;
 * every page is reachable from the navigation; and Debian's headless Chromium renders the start page, the getting
 * started page and the configuration reference, whose picture goes to the guide's assets.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DocsSiteTest {

    static final Path SITE = Path.of("target", "site");
    static final Path GUIDE = SITE.resolve("quarkus-mysql-lock").resolve("dev");
    static final Pattern LINK = Pattern.compile("(?:href|src)=\"([^\"]*)\"");
    static final Pattern ID = Pattern.compile("\\sid=\"([^\"]+)\"");

    @BeforeAll
    static void buildTheSite() throws Exception {
        Optional<String> unavailable = npm().isPresent() ? Optional.empty()
                : AptPackages.install("the docs site (Antora)", "nodejs", "npm")
                        .or(() -> npm().isPresent() ? Optional.empty() : Optional.of("npm is missing after its install"));
        if ("true".equals(System.getenv("CI"))) {
            assertThat(unavailable).as("Node.js and npm, which CI must have").isEmpty();
        }
        Assumptions.assumeTrue(unavailable.isEmpty(), () -> unavailable.orElse(""));
        if (!Files.isExecutable(Path.of("node_modules", ".bin", "antora"))) {
            run(List.of(npm().get(), "ci", "--no-audit", "--no-fund"), Path.of("target", "npm-ci.log"));
        }
        deleteTree(SITE);
        String log = run(List.of(Path.of("node_modules", ".bin", "antora").toString(), "--stacktrace",
                "antora-playbook.yml"), Path.of("target", "antora.log"));
        assertThat(log).as("Antora's warnings and errors").doesNotContainIgnoringCase("WARN")
                .doesNotContainIgnoringCase("ERROR");
        assertThat(GUIDE.resolve("index.html")).exists();
    }

    /** Every relative link and image of every built page resolves to a file, and every #anchor to an id there. */
    @Test
    @Order(1)
    void everyLinkAndAnchorOfTheSiteResolves() throws IOException {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : htmlPages()) {
            Matcher link = LINK.matcher(Files.readString(page));
            while (link.find()) {
                String target = link.group(1);
                if (target.isEmpty() || target.matches("^[a-z]+:.*") || target.startsWith("//")) {
                    continue; // another site, mailto:, data:
                }
                checked++;
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                if (!Files.isRegularFile(resolved)) {
                    broken.add(SITE.relativize(page) + " -> " + target + " (no such file)");
                } else if (hash >= 0 && hash + 1 < target.length() && resolved.toString().endsWith(".html")
                        && !ids(resolved).contains(target.substring(hash + 1))) {
                    broken.add(SITE.relativize(page) + " -> " + target + " (no such anchor)");
                }
            }
        }
        assertThat(checked).as("links checked").isGreaterThan(300);
        assertThat(broken).as("broken links of the built site").isEmpty();
    }

    /** Every page of the guide (not its included fragments) is linked from the navigation. */
    @Test
    @Order(2)
    void everyPageIsReachableFromTheNavigation() throws IOException {
        String start = Files.readString(GUIDE.resolve("index.html"));
        String nav = start.substring(start.indexOf("<nav"), start.indexOf("</nav>"));
        Set<String> linked = new HashSet<>();
        Matcher link = LINK.matcher(nav);
        while (link.find()) {
            linked.add(link.group(1).replaceFirst("#.*", ""));
        }
        List<String> unreachable = new ArrayList<>();
        try (Stream<Path> pages = Files.list(GUIDE)) {
            pages.map(page -> page.getFileName().toString()).filter(name -> name.endsWith(".html"))
                    .filter(name -> !linked.contains(name)).forEach(unreachable::add);
        }
        assertThat(linked).hasSizeGreaterThan(15);
        assertThat(unreachable).as("pages not in the navigation").isEmpty();
    }

    /**
     * The start page, the getting-started page and the configuration reference, served over HTTP and rendered by
     * Chromium: their title, the navigation and the page's own content are on screen, styled by the UI.
     */
    @Test
    @Order(3)
    void theKeyPagesRenderInARealBrowser() throws Exception {
        HeadlessChromium.requiredOrSkipped();
        HttpServer server = serve(SITE);
        String root = "http://127.0.0.1:" + server.getAddress().getPort() + "/";
        try (HeadlessChromium browser = HeadlessChromium.start(1280, 900)) {
            browser.open(root); // the site's start: redirects to the guide's start page
            JsonNode start = rendered(browser, "Quarkus MySQL Lock");
            assertThat(start.get("url").asText()).endsWith("/quarkus-mysql-lock/dev/index.html");
            assertThat(start.get("text").asText()).contains("@Locked").contains("The first start");
            assertThat(start.get("navLinks").asInt()).isGreaterThan(15);
            assertThat(start.get("styled").asBoolean()).as("the UI's stylesheet applied").isTrue();
            Files.write(Path.of("modules", "ROOT", "assets", "images", "docs-site.png"),
                    HeadlessChromium.checkedPng(browser.screenshot(0, 0, 1280, 740)));

            browser.open(root + "quarkus-mysql-lock/dev/testing.html");
            JsonNode testing = rendered(browser, "Testing your code that uses locks");
            assertThat(testing.get("text").asText()).contains("The database your tests get").contains("LockFaults");

            browser.open(root + "quarkus-mysql-lock/dev/config.html");
            JsonNode config = rendered(browser, "Configuration reference");
            assertThat(config.get("text").asText()).contains("quarkus.mysql-lock.mode")
                    .contains("quarkus.mysql-lock.lease.ttl").doesNotContain("config_property_copy_button");
            long properties = Files.readString(Path.of("modules", "ROOT", "pages", "includes", "quarkus-mysql-lock.adoc"))
                    .lines().filter(line -> line.contains("[.property-path]")).count();
            assertThat(config.get("tableRows").asInt()).as("rows of the reference's table, one per property")
                    .isGreaterThan((int) properties).isGreaterThan(15);
        } finally {
            server.stop(0);
        }
    }

    /** What the page shows once its title is on screen, polled while it loads. */
    private static JsonNode rendered(HeadlessChromium browser, String title) throws Exception {
        String read = """
                (() => {
                  const h1 = document.querySelector('main h1');
                  if (!h1 || !h1.textContent.includes('%s') || document.readyState !== 'complete') return null;
                  const nav = document.querySelector('nav');
                  return { url: location.href, text: document.querySelector('main').innerText,
                           navLinks: nav ? nav.querySelectorAll('a').length : 0,
                           tableRows: document.querySelectorAll('main table tr').length,
                           styled: nav != null && getComputedStyle(nav).borderRightStyle === 'solid' };
                })()""".formatted(title);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        JsonNode found = evaluateWhileLoading(browser, read);
        while (found == null || found.isNull() || found.isMissingNode()) {
            assertThat(System.nanoTime()).as("'" + title + "' rendered within 60 s").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100); // polling the page's loading: nothing to wait on
            found = evaluateWhileLoading(browser, read);
        }
        return found;
    }

    /**
     * The script's value, or null while the page navigates: the site's start redirects to the guide's start page, and
     * a script evaluated during that navigation fails with "Inspected target navigated or closed" (seen once).
     */
    private static JsonNode evaluateWhileLoading(HeadlessChromium browser, String script) throws Exception {
        try {
            return browser.evaluate(script);
        } catch (IllegalStateException e) {
            if (String.valueOf(e.getMessage()).contains("navigated") || String.valueOf(e.getMessage()).contains("context")) {
                return null;
            }
            throw e;
        }
    }

    /** The built site over HTTP on a free loopback port, as a web server would serve it. */
    private static HttpServer serve(Path root) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        Path base = root.toAbsolutePath().normalize();
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            Path file = base.resolve(path.substring(1)).normalize();
            if (Files.isDirectory(file)) {
                file = file.resolve("index.html");
            }
            byte[] body;
            int status;
            if (file.startsWith(base) && Files.isRegularFile(file)) {
                body = Files.readAllBytes(file);
                status = 200;
                String name = file.getFileName().toString();
                exchange.getResponseHeaders().add("Content-Type", name.endsWith(".html") ? "text/html; charset=utf-8"
                        : name.endsWith(".css") ? "text/css"
                                : name.endsWith(".png") ? "image/png"
                                        : name.endsWith(".svg") ? "image/svg+xml" : "application/octet-stream");
            } else {
                body = "not found".getBytes(StandardCharsets.UTF_8);
                status = 404;
            }
            exchange.sendResponseHeaders(status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return server;
    }

    private static List<Path> htmlPages() throws IOException {
        try (Stream<Path> files = Files.walk(SITE)) {
            return files.filter(file -> file.toString().endsWith(".html")).toList();
        }
    }

    private static Set<String> ids(Path page) throws IOException {
        Set<String> ids = new HashSet<>();
        Matcher id = ID.matcher(Files.readString(page));
        while (id.find()) {
            ids.add(id.group(1));
        }
        return ids;
    }

    private static Optional<String> npm() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            Path npm = Path.of(dir, "npm");
            if (Files.isExecutable(npm)) {
                return Optional.of(npm.toString());
            }
        }
        return Optional.empty();
    }

    /** Runs a command in the docs module, its output to a log; fails with the log's end if it fails. */
    private static String run(List<String> command, Path log) throws Exception {
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(process.waitFor(10, TimeUnit.MINUTES)).as(command + " finished").isTrue();
        String output = Files.readString(log);
        assertThat(process.exitValue()).as(command + " exit code; its output:\n" + output).isZero();
        return output;
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }
}
