package io.quarkiverse.mysqllock.deployment.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The runtime packages use each other only as the architecture page's table allows (docs: architecture.adoc), so
 * that the layering stays a graph without cycles: the engines never reach up into the wiring, and the JDBC layer
 * reaches nothing.
 */
class PackageLayersTest {

    private static final String BASE = "io.quarkiverse.mysqllock.runtime";
    private static final Path SOURCES = Path.of("..", "runtime", "src", "main", "java", "io", "quarkiverse", "mysqllock",
            "runtime");
    /** "" is the runtime root. */
    private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
            Map.entry("", Set.of("coordination", "engine", "features", "fence", "fleet", "jdbc", "jobs", "lease", "memory",
                    "metrics", "named", "table", "topology", "tracing", "transaction")),
            Map.entry("features", Set.of("coordination", "engine", "jdbc", "jobs", "memory", "named", "table",
                    "transaction")),
            Map.entry("transaction", Set.of("engine")),
            Map.entry("jobs", Set.of("engine", "jdbc", "memory", "table")),
            Map.entry("memory", Set.of("engine", "jdbc", "table")),
            Map.entry("locked", Set.of("", "coordination", "engine", "features", "fence", "jdbc", "jobs")),
            Map.entry("fence", Set.of("jdbc")),
            Map.entry("health", Set.of("", "engine", "jdbc", "jobs")),
            Map.entry("devui", Set.of("", "engine", "jdbc")),
            Map.entry("metrics", Set.of("engine")),
            Map.entry("tracing", Set.of("metrics")),
            Map.entry("named", Set.of("engine", "fleet", "jdbc", "table")),
            Map.entry("lease", Set.of("engine", "fleet", "jdbc", "table")),
            Map.entry("fleet", Set.of("engine", "jdbc", "table", "topology")),
            Map.entry("topology", Set.of("jdbc")),
            Map.entry("engine", Set.of("jdbc")),
            Map.entry("table", Set.of("jdbc")),
            Map.entry("coordination", Set.of()),
            Map.entry("rest", Set.of("", "fence")),
            Map.entry("jdbc", Set.of()));
    private static final String STRING = "\"(?:[^\"\\\\\\n]|\\\\.)*\"";
    /** Any reference: an import (also static or with a wildcard), or a qualified name in the code or its comments. */
    private static final Pattern REFERENCE = Pattern.compile(Pattern.quote(BASE) + "\\.([a-zA-Z0-9_.]+)");

    @Test
    void everyImportBetweenRuntimePackagesIsAllowed() throws IOException {
        assertThat(SOURCES).as("the runtime sources, from the deployment module").isDirectory();
        List<String> broken = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> walk = Files.walk(SOURCES)) {
            files = walk.filter(f -> f.toString().endsWith(".java")).toList();
        }
        for (Path file : files) {
            String from = packageOf(SOURCES.relativize(file.getParent()).toString().replace('/', '.'));
            assertThat(ALLOWED).as("a package the table knows: " + file).containsKey(from);
            // a logging category is a name, not a dependency: string literals are left out
            String source = Files.readString(file).replaceFirst("(?m)^package .*;", "").replaceAll(STRING, "\"\"");
            Matcher references = REFERENCE.matcher(source);
            while (references.find()) {
                String to = targetPackage(references.group(1));
                if (!to.equals(from) && !ALLOWED.get(from).contains(to)) {
                    broken.add(file.getFileName() + " (" + label(from) + ") uses " + BASE + "." + references.group(1)
                            + " (" + label(to) + ")");
                }
            }
        }
        assertThat(files).hasSizeGreaterThan(50);
        assertThat(broken).as("imports the layering does not allow").isEmpty();
    }

    /** The top-level runtime package of a package below the root: named.x is named. */
    private static String packageOf(String relative) {
        int dot = relative.indexOf('.');
        return dot < 0 ? relative : relative.substring(0, dot);
    }

    /** The package an import names: a class of the root, or the first package below it. */
    private static String targetPackage(String imported) {
        String first = imported.contains(".") ? imported.substring(0, imported.indexOf('.')) : imported;
        return Character.isUpperCase(first.charAt(0)) ? "" : first;
    }

    private static String label(String pkg) {
        return pkg.isEmpty() ? "the runtime root" : pkg;
    }
}
