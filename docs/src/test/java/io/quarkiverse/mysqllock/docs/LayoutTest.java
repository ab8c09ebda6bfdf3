package io.quarkiverse.mysqllock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The architecture page is the one description of the layout, and it matches the code: the modules, the runtime's
 * packages and what each may import ({@code PackageLayersTest}'s map, which the build enforces), and where the tests
 * are.
 */
class LayoutTest {

    static final Path PROJECT = Path.of("..");
    static final Path PAGE = DocsTest.PAGES.resolve("architecture.adoc");
    static final Path RUNTIME = PROJECT.resolve("runtime/src/main/java/io/quarkiverse/mysqllock/runtime");
    static final Path RUNTIME_TESTS = PROJECT.resolve("runtime/src/test/java/io/quarkiverse/mysqllock/runtime");
    static final Path DEPLOYMENT_TESTS = PROJECT.resolve("deployment/src/test/java/io/quarkiverse/mysqllock/deployment");
    static final Path LAYERS = DEPLOYMENT_TESTS.resolve("architecture/PackageLayersTest.java");
    /** What the page calls the runtime root, in the table and in the import lists. */
    static final String ROOT = "root";
    static final Pattern CODE = Pattern.compile("`([a-z-]+)/?`");
    static final Pattern ENTRY = Pattern.compile("Map\\.entry\\(\"([a-z]*)\",\\s*Set\\.of\\(([^)]*)\\)\\)");
    static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");

    @Test
    void thePackageTableIsTheLayeringTheBuildEnforces() throws IOException {
        Map<String, Set<String>> documented = new TreeMap<>();
        for (String[] row : rows(section("== Runtime packages"), 3)) {
            Set<String> imports = row[1].trim().equals("nothing") ? Set.of() : names(row[1]);
            documented.put(row[0].contains("(root)") ? ROOT : single(row[0]), imports);
        }
        Map<String, Set<String>> enforced = new TreeMap<>();
        Matcher entry = ENTRY.matcher(Files.readString(LAYERS));
        while (entry.find()) {
            enforced.put(entry.group(1).isEmpty() ? ROOT : entry.group(1), Pattern.compile("\"([a-z]*)\"")
                    .matcher(entry.group(2)).results().map(m -> m.group(1).isEmpty() ? ROOT : m.group(1))
                    .collect(Collectors.toCollection(TreeSet::new)));
        }
        assertThat(enforced).as("PackageLayersTest's map, read from its source").hasSizeGreaterThan(10);
        assertThat(documented).as("the architecture page's package table against PackageLayersTest's map")
                .isEqualTo(enforced);
        Set<String> packages = directories(RUNTIME);
        packages.add(ROOT);
        assertThat(documented.keySet()).as("the package table against the runtime's packages").isEqualTo(packages);
    }

    @Test
    void theTestTableListsEveryTestPackage() throws IOException {
        Set<String> documented = new TreeSet<>();
        for (String[] row : rows(section("== Where the tests are"), 2)) {
            documented.add(single(row[0]));
        }
        assertThat(documented).as("the page's table of deployment test packages").isEqualTo(
                directories(DEPLOYMENT_TESTS));
        Set<String> runtimePackages = directories(RUNTIME);
        assertThat(directories(RUNTIME_TESTS)).as("runtime/src/test mirrors the runtime's packages")
                .isNotEmpty().isSubsetOf(runtimePackages);
    }

    @Test
    void theModuleTableListsEveryModule() throws IOException {
        Set<String> documented = new TreeSet<>();
        for (String[] row : rows(section("== Modules"), 2)) {
            documented.addAll(names(row[0]));
        }
        Set<String> modules = MODULE.matcher(Files.readString(PROJECT.resolve("pom.xml"))).results()
                .map(m -> m.group(1)).collect(Collectors.toCollection(TreeSet::new));
        assertThat(documented).as("the page's module table against the root POM's modules (profiles included)")
                .isEqualTo(modules);
    }

    /** The text of a section of the page, from its heading to the next one of its level. */
    private static String section(String heading) throws IOException {
        String page = Files.readString(PAGE);
        int start = page.indexOf("\n" + heading);
        assertThat(start).as("section '%s' of the architecture page", heading).isNotNegative();
        int end = page.indexOf("\n== ", start + 1);
        return page.substring(start, end < 0 ? page.length() : end);
    }

    /**
     * The rows of the section's first table with {@code columns} columns, each cell's text; a row starts with a line
     * {@code | `name`}, and a cell may go on over several lines.
     */
    private static java.util.List<String[]> rows(String section, int columns) {
        int open = section.indexOf("|===");
        int close = section.indexOf("|===", open + 4);
        assertThat(open).as("a table in the section").isNotNegative();
        String table = section.substring(open + 4, close);
        java.util.List<String[]> rows = new java.util.ArrayList<>();
        // cells: "| text" up to the next "|" at a line start or after a space; the header row is left out
        java.util.List<String> cells = new java.util.ArrayList<>();
        for (String cell : table.split("(?m)(^|\\s)\\|\\s")) {
            if (!cell.isBlank()) {
                cells.add(cell.strip());
            }
        }
        for (int i = columns; i + columns <= cells.size(); i += columns) {
            rows.add(cells.subList(i, i + columns).toArray(new String[0]));
        }
        assertThat(cells.size() % columns).as("whole rows of %d cells", columns).isZero();
        return rows;
    }

    private static Set<String> names(String cell) {
        Set<String> names = new TreeSet<>();
        Matcher code = CODE.matcher(cell);
        while (code.find()) {
            names.add(code.group(1));
        }
        if (cell.matches("(?s)^root\\b.*")) {
            names.add(ROOT);
        }
        return names;
    }

    private static String single(String cell) {
        Set<String> names = names(cell);
        assertThat(names).as("one package named in '%s'", cell).hasSize(1);
        return names.iterator().next();
    }

    private static Set<String> directories(Path parent) throws IOException {
        try (Stream<Path> children = Files.list(parent)) {
            return children.filter(Files::isDirectory).map(p -> p.getFileName().toString())
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }
}
