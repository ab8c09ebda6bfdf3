package io.quarkiverse.mysqllock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The project's own files that no build step reads: the GitHub workflows, Dependabot's and the release's settings, the
 * extension's descriptor, the Maven wrapper. Each is parsed, and what it must say is checked, so a broken one fails
 * the build rather than the first release.
 */
class ProjectFilesTest {

    static final Path PROJECT = Path.of("..");
    static final Path GITHUB = PROJECT.resolve(".github");

    @Test
    void theBuildWorkflowRunsTheOneTestEntryPointAndDeclaresTheNativeBuild() throws IOException {
        Map<String, Object> workflow = yaml(GITHUB.resolve("workflows/build.yml"));
        assertThat(workflow).containsKeys("name", "jobs");
        // YAML 1.1 reads the key "on" as true
        assertThat(workflow.containsKey("on") || workflow.containsKey(true)).as("triggers").isTrue();
        Map<String, Object> jobs = map(workflow.get("jobs"));
        assertThat(jobs).containsKeys("build", "native");
        assertThat(runs(jobs.get("build"))).as("the JVM job's commands").contains(".ci/run");
        assertThat(map(jobs.get("native")).get("needs")).isEqualTo("build");
        assertThat(String.join("\n", runs(jobs.get("native")))).contains("./mvnw").contains("-Pnative-tests");
        assertThat(Files.readString(PROJECT.resolve(".ci/run"))).as(".ci/run").contains("./mvnw -B -ntp");
    }

    @Test
    void theReleaseWorkflowsUseQuarkiversesAndProjectYmlNamesTheVersions() throws IOException {
        for (String file : List.of("pre-release.yml", "release-prepare.yml", "release-perform.yml")) {
            Map<String, Object> workflow = yaml(GITHUB.resolve("workflows").resolve(file));
            Map<String, Object> jobs = map(workflow.get("jobs"));
            assertThat(jobs).hasSize(1);
            assertThat((String) map(jobs.values().iterator().next()).get("uses"))
                    .startsWith("quarkiverse/.github/.github/workflows/");
        }
        Map<String, Object> release = map(yaml(GITHUB.resolve("project.yml")).get("release"));
        assertThat((String) release.get("current-version")).matches("\\d+\\.\\d+\\.\\d+");
        assertThat(release.get("next-version")).isEqualTo("999-SNAPSHOT");
    }

    @Test
    void dependabotWatchesMavenAndTheActions() throws IOException {
        Map<String, Object> dependabot = yaml(GITHUB.resolve("dependabot.yml"));
        assertThat(dependabot.get("version")).isEqualTo(2);
        List<Map<String, Object>> updates = list(dependabot.get("updates"));
        assertThat(updates).extracting(update -> update.get("package-ecosystem")).containsExactlyInAnyOrder("maven",
                "github-actions");
        assertThat(updates).allSatisfy(update -> assertThat(map(update.get("schedule"))).containsKey("interval"));
    }

    @Test
    void theExtensionDescriptorIsComplete() throws IOException {
        Map<String, Object> descriptor = yaml(PROJECT.resolve("runtime/src/main/resources/META-INF/quarkus-extension.yaml"));
        assertThat(descriptor).containsKeys("name", "description", "metadata");
        Map<String, Object> metadata = map(descriptor.get("metadata"));
        assertThat(metadata).containsKeys("keywords", "categories", "guide", "icon-url", "status", "config");
        assertThat((String) metadata.get("guide")).startsWith("https://docs.quarkiverse.io/quarkus-mysql-lock/");
        String icon = (String) metadata.get("icon-url");
        assertThat(PROJECT.resolve(icon.substring(icon.indexOf("/main/") + "/main/".length()))).as("the icon").exists();
        assertThat(list(metadata.get("categories"))).isNotEmpty();
        assertThat(metadata.get("status")).isIn("experimental", "preview", "stable");
    }

    @Test
    void theMavenWrapperPinsAMaven39() throws IOException {
        Properties wrapper = new Properties();
        try (var in = Files.newInputStream(PROJECT.resolve(".mvn/wrapper/maven-wrapper.properties"))) {
            wrapper.load(in);
        }
        assertThat(wrapper.getProperty("distributionUrl"))
                .matches("https://repo\\.maven\\.apache\\.org/maven2/org/apache/maven/apache-maven/3\\.9\\.\\d+/.*-bin\\.zip");
        assertThat(PROJECT.resolve("mvnw")).isExecutable();
    }

    static Map<String, Object> yaml(Path file) throws IOException {
        return new Yaml().load(Files.readString(file));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object value) {
        assertThat(value).isInstanceOf(Map.class);
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static <T> List<T> list(Object value) {
        assertThat(value).isInstanceOf(List.class);
        return (List<T>) value;
    }

    /** The commands of a job's steps. */
    static List<String> runs(Object job) {
        List<Map<String, Object>> steps = list(map(job).get("steps"));
        return steps.stream().filter(step -> step.containsKey("run")).map(step -> (String) step.get("run")).toList();
    }
}
