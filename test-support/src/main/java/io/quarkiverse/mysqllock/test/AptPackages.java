package io.quarkiverse.mysqllock.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** Debian's packages the tests need, installed with apt-get when absent and the build runs as root. */
public final class AptPackages {

    private AptPackages() {
    }

    /**
     * Installs the packages (an {@code apt-get update} first if the install fails).
     *
     * @return empty once installed, or why they could not be
     */
    public static Optional<String> install(String purpose, String... packages) {
        if (!"root".equals(System.getProperty("user.name")) || !Files.isExecutable(Path.of("/usr/bin/apt-get"))) {
            return Optional.of(purpose + " needs Debian's packages " + String.join(", ", packages)
                    + ", which are absent, and they can be installed only by root with apt-get");
        }
        System.out.println(purpose + ": installing Debian's " + String.join(" ", packages));
        if (apt("install", packages) != 0 && (apt("update", packages) != 0 || apt("install", packages) != 0)) {
            return Optional.of("apt-get could not install " + String.join(", ", packages));
        }
        return Optional.empty();
    }

    private static int apt(String verb, String... packages) {
        List<String> command = new ArrayList<>(List.of("apt-get", verb, "-y", "-q"));
        if (verb.equals("install")) {
            command.add("--no-install-recommends");
            command.addAll(List.of(packages));
        }
        try {
            ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
            builder.environment().put("DEBIAN_FRONTEND", "noninteractive");
            Process process = builder.start();
            return process.waitFor(15, TimeUnit.MINUTES) ? process.exitValue() : -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
