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
 * reactor with its own wrapper, its tests pass against an embedded MariaDB (no Docker, no installed database).
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
                .exists().content().contains("@EmbeddedMariaDb").contains("faults.loseLock(");
        codestartTest.assertThatGeneratedFile(Language.JAVA, "pom.xml").content()
                .contains("<artifactId>quarkus-mysql-lock</artifactId>")
                .contains("<artifactId>quarkus-mysql-lock-test</artifactId>")
                .contains("<artifactId>quarkus-scheduler</artifactId>");
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
