/*
 * Starts the builder (NativeImageGeneratorRunner, from the builder jars in lib/svm/builder) on this JDK (README.md):
 * its JVM's options, its heap sized as the real driver sizes it, the linker options that link the JDK's shared
 * libraries and the libjvm.so stand-in, and the version it reports.
 */
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

final class Builder {

    static final String VERSION = System.getProperty("qml.graalvm.version", "25.0.2");

    private Builder() {
    }

    /** The vendor version a GraalVM CE of the builder's version on this JDK's build number has. */
    static String vendorVersion() {
        return "GraalVM CE " + VERSION + "+" + Runtime.version().build().map(String::valueOf).orElse("0") + ".1";
    }

    /** The three lines Quarkus' version parser reads (GraalVM CE, since the builder jars are GraalVM CE's). */
    static void printVersion() {
        Runtime.Version java = Runtime.version();
        String build = java.feature() + "." + java.interim() + "." + java.update() + "+"
                + java.build().map(String::valueOf).orElse("0");
        System.out.println("native-image " + VERSION + " " + System.getProperty("java.version.date", "2026-01-20"));
        System.out.println("GraalVM Runtime Environment " + vendorVersion() + " (build " + build + "-jvmci-b01)");
        System.out.println("Substrate VM " + vendorVersion() + " (build " + build + ", serial gc)");
    }

    /**
     * The builder's heap, as the real driver sizes it: 85% of the machine's memory in CI (CI=true), else what is
     * available now (at most 32 GB, at least 85% when that is under 8 GB). A -J-Xmx given later wins.
     */
    static long maxRamPercentage() {
        long total = 0;
        long available = 0;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                String[] parts = line.split("\\s+");
                if (parts[0].equals("MemTotal:")) {
                    total = Long.parseLong(parts[1]) * 1024;
                } else if (parts[0].equals("MemAvailable:")) {
                    available = Long.parseLong(parts[1]) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return 85;
        }
        if (total == 0 || "true".equals(System.getenv("CI")) || available < 8L << 30) {
            return 85;
        }
        return Math.max(1, Math.min(available, 32L << 30) * 100 / total);
    }

    /** Runs the builder for the invocation: its exit code. */
    static int run(Path home, Invocation call) throws IOException, InterruptedException {
        Path builder = home.resolve("lib/svm/builder");
        List<String> modules = new ArrayList<>();
        try (var files = Files.list(builder)) {
            files.filter(p -> p.toString().endsWith(".jar") && !p.getFileName().toString().startsWith("compiler-")).sorted().forEach(p -> modules.add(p.toString()));
        }
        String clibraries = home.resolve("lib/svm/clibraries/linux-amd64").toString();
        String shims = home.resolve("lib/svm/native").toString();
        String jdkLibs = home.resolve("lib").toString();
        List<String> command = new ArrayList<>();
        command.add(home.resolve("bin/java").toString());
        command.add("@" + home.resolve("lib/svm/builder-jvm.args"));
        command.add("-XX:MaxRAMPercentage=" + maxRamPercentage());
        command.add("-Dorg.graalvm.version=" + VERSION);
        command.add("-Dorg.graalvm.vendor=GraalVM Community");
        command.add("-Dorg.graalvm.vendorurl=https://www.graalvm.org/");
        command.add("-Dorg.graalvm.vendorversion=" + vendorVersion());
        command.addAll(call.jvmArgs);
        command.add("--module-path");
        command.add(String.join(":", modules));
        command.add("--module");
        command.add("org.graalvm.nativeimage.builder/com.oracle.svm.hosted.NativeImageGeneratorRunner");
        command.add("-imagecp");
        command.add(String.join(":", call.classpath));
        command.add("-H:CLibraryPath=" + clibraries + "/glibc," + clibraries);
        command.add("-H:Path=" + Path.of("").toAbsolutePath());
        // The JDK's own native libraries are the JDK's shared ones, linked where the image uses them; libjvm.so is the
        // stand-in, loaded first so that theirs resolve to it (README.md).
        command.add("-H:NativeLinkerOption=-L" + shims);
        command.add("-H:NativeLinkerOption=-L" + jdkLibs);
        command.add("-H:NativeLinkerOption=-Wl,--no-as-needed");
        command.add("-H:NativeLinkerOption=-l:libjvm.so");
        command.add("-H:NativeLinkerOption=-Wl,--as-needed");
        try (var files = Files.list(home.resolve("lib/static/linux-amd64/glibc"))) {
            files.map(p -> p.getFileName().toString()).filter(f -> f.startsWith("lib") && f.endsWith(".a")).sorted()
                    .forEach(f -> command.add("-H:NativeLinkerOption=-l:" + f.substring(0, f.length() - 2) + ".so"));
        }
        command.add("-H:NativeLinkerOption=-Wl,--no-as-needed");
        command.add("-H:NativeLinkerOption=-Wl,-rpath," + shims + ":" + jdkLibs);
        command.addAll(call.builderArgs);
        if (call.mainClass != null) {
            command.add("-H:Class=" + call.mainClass);
        }
        if (call.name != null) {
            command.add("-H:Name=" + call.name);
        }
        command.add("-H:ImageBuildID=" + UUID.randomUUID());
        if (call.verbose) {
            System.out.println(String.join(" ", command));
        }
        ProcessBuilder builderProcess = new ProcessBuilder(command).inheritIO();
        builderProcess.environment().putAll(call.environment);
        return builderProcess.start().waitFor();
    }
}
