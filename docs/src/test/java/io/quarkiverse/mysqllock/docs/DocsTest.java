package io.quarkiverse.mysqllock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/** The guide's configuration reference is complete, and its cross-references resolve. */
class DocsTest {

    static final Path ROOT = Path.of("modules/ROOT");
    static final Path PAGES = ROOT.resolve("pages");
    static final Pattern PROPERTY = Pattern.compile("\\[\\.property-path\\]##link:#[^\\[]+\\[`([^`]+)`\\]##");
    static final Pattern XREF = Pattern.compile("xref:([a-z-]+\\.adoc)(#[A-Za-z0-9_-]+)?\\[");
    static final Pattern HEADING = Pattern.compile("(?m)^=+ (.+)$");
    static final Pattern ANCHOR = Pattern.compile("\\[\\[([A-Za-z0-9_-]+)\\]\\]");

    /** Every property has a default, or its description says what leaving it unset does. */
    @Test
    void everyPropertyHasItsDefaultOrSaysWhatUnsetMeans() throws IOException {
        String reference = Files.readString(PAGES.resolve("includes/quarkus-mysql-lock.adoc"));
        List<String> properties = new ArrayList<>();
        List<String> undocumented = new ArrayList<>();
        Matcher name = PROPERTY.matcher(reference);
        List<int[]> starts = new ArrayList<>();
        while (name.find()) {
            properties.add(name.group(1));
            starts.add(new int[] { name.start() });
        }
        for (int i = 0; i < properties.size(); i++) {
            // A row: the property, its description, its type cell, then its default cell, the last line
            // starting with "|" before the next property ("|" alone when there is no default).
            String row = reference.substring(starts.get(i)[0],
                    i + 1 < starts.size() ? starts.get(i + 1)[0] : reference.length());
            String defaultCell = row.lines().filter(line -> line.startsWith("|") && !line.startsWith("|==="))
                    .reduce((first, second) -> second).orElse("|");
            if (defaultCell.strip().equals("|") && !row.contains("Unset")) {
                undocumented.add(properties.get(i));
            }
        }
        assertThat(properties).as("properties in the reference").contains("quarkus.mysql-lock.mode",
                "quarkus.mysql-lock.lease.ttl", "quarkus.mysql-lock.named.keepalive-interval",
                "quarkus.mysql-lock.health.enabled", "quarkus.mysql-lock.metrics.enabled");
        assertThat(undocumented).as("properties with neither a default nor what unset means").isEmpty();
    }

    /** The reference lists exactly the properties of the extension's config model, so it is not stale. */
    @Test
    void theReferenceMatchesTheConfigModel() throws IOException {
        Set<String> model = new HashSet<>();
        String yaml = Files.readString(Path.of("../runtime/target/quarkus-config-doc/quarkus-config-model.yaml"));
        Matcher path = Pattern.compile("(?m)^\\s+property: \"(quarkus\\.mysql-lock\\.(?:[^\"\\\\]|\\\\.)+)\"$")
                .matcher(yaml);
        List<int[]> found = new ArrayList<>();
        List<String> names = new ArrayList<>();
        while (path.find()) {
            found.add(new int[] { path.start(), path.end() });
            names.add(path.group(1).replace("\\\"", "\"")); // a map key is quoted: "datasource-name"
        }
        for (int i = 0; i < names.size(); i++) {
            // a deprecated property (a deprecation before the next property) is left out of the reference
            String rest = yaml.substring(found.get(i)[1], i + 1 < found.size() ? found.get(i + 1)[0] : yaml.length());
            if (!rest.contains("deprecation:")) {
                model.add(names.get(i));
            }
        }
        Set<String> documented = new HashSet<>();
        Matcher name = PROPERTY.matcher(Files.readString(PAGES.resolve("includes/quarkus-mysql-lock.adoc")));
        while (name.find()) {
            documented.add(name.group(1));
        }
        // Sections (quarkus.mysql-lock.lease, ...) have paths too: keep the leaves.
        model.removeIf(candidate -> model.stream().anyMatch(other -> other.startsWith(candidate + ".")));
        assertThat(model).as("properties in the config model").isNotEmpty();
        assertThat(documented).isEqualTo(model);
    }

    /** Every xref of the navigation and the pages names an existing page, and an existing section of it. */
    @Test
    void crossReferencesResolve() throws IOException {
        List<Path> files = new ArrayList<>(List.of(ROOT.resolve("nav.adoc")));
        try (Stream<Path> pages = Files.list(PAGES)) {
            pages.filter(page -> page.toString().endsWith(".adoc")).forEach(files::add);
        }
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path file : files) {
            Matcher xref = XREF.matcher(Files.readString(file));
            while (xref.find()) {
                checked++;
                Path target = PAGES.resolve(xref.group(1));
                if (!Files.exists(target)) {
                    broken.add(file.getFileName() + " -> " + xref.group());
                } else if (xref.group(2) != null && !ids(Files.readString(target)).contains(xref.group(2).substring(1))) {
                    broken.add(file.getFileName() + " -> " + xref.group() + " (no such section)");
                }
            }
        }
        assertThat(checked).as("cross-references checked").isGreaterThan(10);
        assertThat(broken).isEmpty();
    }

    /**
     * The README is a front door: short, no measurement tables (those are the proof page's), the test command it gives
     * is the one CI runs, and every link in it resolves to a file of the repository.
     */
    @Test
    void theReadmeIsAFrontDoor() throws IOException {
        String readme = Files.readString(Path.of("../README.md"));
        assertThat(readme.lines().count()).as("README lines").isLessThanOrEqualTo(160);
        assertThat(readme).as("measurements belong to the proof page").doesNotContain("ops/s", "p99", "× floor");
        String ci = Files.readString(Path.of("../.ci/run"));
        Matcher command = Pattern.compile("(?m)^(\\./mvnw -B -ntp install -Dno-format -Pnative-tests)( \\|\\| status=\\$\\?)?$")
                .matcher(ci);
        assertThat(command.find()).as(".ci/run runs the suite's command").isTrue();
        assertThat(readme).as("the README gives the command .ci/run runs").contains("\n" + command.group(1) + "\n");
        List<String> broken = new ArrayList<>();
        Matcher link = Pattern.compile("\\]\\(([^)#:]+)(#[^)]*)?\\)").matcher(readme);
        int checked = 0;
        while (link.find()) {
            checked++;
            if (!Files.exists(Path.of("..").resolve(link.group(1)))) {
                broken.add(link.group(1));
            }
        }
        assertThat(checked).as("README links checked").isGreaterThan(10);
        assertThat(broken).as("README links to missing files").isEmpty();
    }

    /** Every page of the guide can be reached from the navigation. */
    @Test
    void everyPageIsInTheNavigation() throws IOException {
        String nav = Files.readString(ROOT.resolve("nav.adoc"));
        List<String> missing = new ArrayList<>();
        try (Stream<Path> pages = Files.list(PAGES)) {
            pages.map(page -> page.getFileName().toString()).filter(name -> name.endsWith(".adoc"))
                    .filter(name -> !nav.contains("xref:" + name + "[")).forEach(missing::add);
        }
        assertThat(missing).as("pages not in nav.adoc").isEmpty();
    }

    static final Pattern LISTING = Pattern.compile("(?ms)^(----|\\.\\.\\.\\.)\n.*?^\\1\n");

    /**
     * The user-facing pages can be scanned: no paragraph, list item or table cell over 80 words (code and literal
     * blocks aside). The architecture page, for contributors, is left out.
     */
    @Test
    void noParagraphOfTheUserGuideIsOverEightyWords() throws IOException {
        List<String> tooLong = new ArrayList<>();
        try (Stream<Path> pages = Files.list(PAGES)) {
            for (Path page : pages.filter(file -> file.toString().endsWith(".adoc"))
                    .filter(file -> !file.getFileName().toString().equals("architecture.adoc")).sorted().toList()) {
                String text = LISTING.matcher(Files.readString(page)).replaceAll("");
                for (String paragraph : text.split("\n\\s*\n")) {
                    String first = paragraph.strip();
                    List<String> chunks;
                    if (first.startsWith("|")) {
                        chunks = List.of(paragraph.split("(?m)^\\||\\s\\|"));
                    } else if (first.isEmpty() || first.startsWith("[") || first.startsWith("=")
                            || first.startsWith("include::") || first.startsWith("image::") || first.startsWith("//")
                            || first.startsWith(":")) {
                        continue;
                    } else {
                        chunks = List.of(paragraph.split("(?m)^(?:\\*+|\\.+|<\\d+>|-)\\s"));
                    }
                    for (String chunk : chunks) {
                        String[] words = chunk.replaceAll("`[^`]*`", "X").strip().split("\\s+");
                        if (words.length > 80) {
                            tooLong.add(page.getFileName() + ": " + words.length + " words: "
                                    + String.join(" ", java.util.Arrays.copyOf(words, 12)) + "...");
                        }
                    }
                }
            }
        }
        assertThat(tooLong).as("paragraphs over 80 words").isEmpty();
    }

    static final Pattern INCLUDE_EXAMPLE = Pattern.compile("include::example\\$([^\\[]+)\\[(?:tags?=([^\\]]+))?\\]");

    /**
     * Every example a page includes exists under modules/ROOT/examples (which the integration tests' application
     * compiles and runs), with the tags the page names.
     */
    @Test
    void includedExamplesExistWithTheirTags() throws IOException {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        try (Stream<Path> pages = Files.list(PAGES)) {
            for (Path page : pages.filter(file -> file.toString().endsWith(".adoc")).toList()) {
                Matcher include = INCLUDE_EXAMPLE.matcher(Files.readString(page));
                while (include.find()) {
                    checked++;
                    Path example = ROOT.resolve("examples").resolve(include.group(1));
                    if (!Files.exists(example)) {
                        broken.add(page.getFileName() + " -> " + include.group(1) + " (no such file)");
                        continue;
                    }
                    String source = Files.readString(example);
                    if (include.group(2) != null) {
                        for (String tag : include.group(2).split("[;,]")) {
                            if (!source.contains("tag::" + tag + "[]") || !source.contains("end::" + tag + "[]")) {
                                broken.add(page.getFileName() + " -> " + include.group(1) + " (no tag " + tag + ")");
                            }
                        }
                    }
                }
            }
        }
        assertThat(checked).as("example includes checked").isGreaterThanOrEqualTo(2);
        assertThat(broken).isEmpty();
    }

    /** The ids Asciidoctor gives a page's sections (its default idprefix "_" and idseparator "_"), and explicit ones. */
    static Set<String> ids(String page) {
        Set<String> ids = new HashSet<>();
        Matcher heading = HEADING.matcher(page);
        while (heading.find()) {
            String title = heading.group(1).toLowerCase(Locale.ROOT).replaceAll("<[^>]+>|&[a-z0-9#]+;", "")
                    .replaceAll("[^ \\p{L}\\p{N}_.-]", "");
            ids.add("_" + title.replaceAll("[ .-]+", "_").replaceAll("_+$", ""));
        }
        Matcher anchor = ANCHOR.matcher(page);
        while (anchor.find()) {
            ids.add(anchor.group(1));
        }
        return ids;
    }
}
