package io.quarkiverse.mysqllock.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Debian's packages a {@link GaleraCluster} runs on, and their installation: found where they are, installed with
 * apt-get when absent and the build runs as root (once per JVM), otherwise a reason why a cluster cannot run here.
 */
final class GaleraPackages {

    static final Path MARIADBD = Path.of("/usr/sbin/mariadbd");
    static final Path INSTALL_DB = Path.of("/usr/bin/mariadb-install-db");
    static final Path PROVIDER = Path.of("/usr/lib/galera/libgalera_smm.so");
    static final Path RSYNC = Path.of("/usr/bin/rsync");
    static final List<Path> FAKETIME_LIBRARIES = List.of(
            Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
            Path.of("/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"));
    static final String[] PACKAGES = { "mariadb-server", "galera-4", "rsync", "faketime" };

    private static Optional<String> unavailable;

    private GaleraPackages() {
    }

    static synchronized Optional<String> unavailable() {
        if (unavailable == null) {
            unavailable = findOrInstall();
        }
        return unavailable;
    }

    private static Optional<String> findOrInstall() {
        if (installed()) {
            return Optional.empty();
        }
        Optional<String> failed = AptPackages.install("galera", PACKAGES);
        if (failed.isPresent()) {
            return failed;
        }
        stopPackagedService();
        return installed() ? Optional.empty()
                : Optional.of("the packages were installed, but " + MARIADBD + " or " + PROVIDER + " is missing");
    }

    private static boolean installed() {
        return Files.isExecutable(MARIADBD) && Files.isExecutable(INSTALL_DB) && Files.exists(PROVIDER)
                && Files.isExecutable(RSYNC) && faketimeLibrary().isPresent();
    }

    /** The package starts a server of its own on port 3306 where it can: the tests need none. */
    private static void stopPackagedService() {
        try {
            new ProcessBuilder("service", "mariadb", "stop").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(60, TimeUnit.SECONDS);
        } catch (IOException e) {
            // no service manager: nothing was started
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static Optional<Path> faketimeLibrary() {
        return FAKETIME_LIBRARIES.stream().filter(Files::exists).findFirst();
    }
}
