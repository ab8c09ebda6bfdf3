/*
 * A small stand-in for GraalVM's `native-image` driver, which is not published on Maven Central. It starts the
 * builder (NativeImageGeneratorRunner, from the builder jars in lib/svm/builder) on this JDK and translates the
 * driver options Quarkus and the libraries' META-INF/native-image files use into builder options. An option it does
 * not know stops it with a message: it never drops one silently. See README.md.
 */
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;

public class NativeImage {

    static final String VERSION = System.getProperty("qml.graalvm.version", "25.0.2");

    /** Metadata files a jar may carry under META-INF/native-image/, and the builder option that reads each. */
    static final Map<String, String> METADATA = Map.of(
            "reflect-config.json", "ReflectionConfigurationResources",
            "resource-config.json", "ResourceConfigurationResources",
            "jni-config.json", "JNIConfigurationResources",
            "proxy-config.json", "DynamicProxyConfigurationResources",
            "serialization-config.json", "SerializationConfigurationResources",
            "predefined-classes-config.json", "PredefinedClassesConfigurationResources",
            "reachability-metadata.json", "ReachabilityMetadataResources");

    final Path home;
    final List<String> jvmArgs = new ArrayList<>();
    final List<String> builderArgs = new ArrayList<>();
    final Set<String> classpath = new LinkedHashSet<>();
    final List<Pattern[]> excludedConfig = new ArrayList<>();
    final Map<String, String> environment = new java.util.LinkedHashMap<>();
    final List<String> positional = new ArrayList<>();
    String name;
    String mainClass;
    boolean fromJar;
    boolean verbose;

    NativeImage(Path home) {
        this.home = home;
    }

    public static void main(String[] args) throws Exception {
        Path home = Path.of(System.getProperty("qml.graalvm.home"));
        if (args.length == 1 && (args[0].equals("--version") || args[0].equals("-version"))) {
            printVersion();
            return;
        }
        NativeImage driver = new NativeImage(home);
        driver.parse(List.of(args), "command line", null, true);
        driver.positionals();
        driver.readJarMetadata();
        System.exit(driver.build());
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
     * Reads driver options. {@code originUri} is the native-image.properties file they come from (null on the command
     * line): the builder options made of them carry it, as the real driver's do, so that an option such as
     * --link-at-build-time without a value applies to that jar only.
     */
    void parse(List<String> args, String origin, String originUri, boolean commandLine) {
        int before = builderArgs.size();
        parseOptions(args, origin, commandLine);
        if (originUri != null) {
            for (int i = before; i < builderArgs.size(); i++) {
                builderArgs.set(i, withOrigin(builderArgs.get(i), originUri));
            }
        }
    }

    /** -H:Name=value becomes -H:Name@origin=value, and -H:+Name -H:+Name@origin. */
    static String withOrigin(String option, String origin) {
        int eq = option.indexOf('=');
        String name = eq < 0 ? option : option.substring(0, eq);
        return name.contains("@") ? option : name + "@" + origin + (eq < 0 ? "" : option.substring(eq));
    }

    void parseOptions(List<String> args, String origin, boolean commandLine) {
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.startsWith("-J")) {
                require(arg.length() > 2, "-J needs a JVM option after it", origin);
                jvmArgs.add(arg.substring(2));
            } else if (arg.startsWith("-D")) {
                jvmArgs.add(arg);
            } else if (arg.startsWith("-H:")) {
                builderArgs.add(arg);
            } else if (arg.startsWith("-E")) {
                // -Ekey=value sets a variable for the builder; -Ekey passes the driver's own (the rest is inherited)
                String variable = arg.substring(2);
                int eq = variable.indexOf('=');
                require(!variable.isEmpty() && eq != 0, "-E needs a variable name", origin);
                if (eq > 0) {
                    environment.put(variable.substring(0, eq), variable.substring(eq + 1));
                }
            } else if (arg.equals("-jar")) {
                require(commandLine && i + 1 < args.size(), "-jar needs a jar", origin);
                addJar(Path.of(args.get(++i)).toAbsolutePath(), true);
            } else if (arg.equals("-cp") || arg.equals("--class-path") || arg.equals("-classpath")) {
                require(i + 1 < args.size(), arg + " needs a class path", origin);
                for (String entry : args.get(++i).split(":")) {
                    addJar(Path.of(entry.isEmpty() ? "." : entry).toAbsolutePath(), false);
                }
            } else if (arg.equals("-o")) {
                require(i + 1 < args.size(), "-o needs a name", origin);
                name = args.get(++i);
            } else if (arg.equals("--exclude-config")) {
                require(i + 2 < args.size(), "--exclude-config needs a jar pattern and a resource pattern", origin);
                excludedConfig.add(new Pattern[] { Pattern.compile(args.get(++i)), Pattern.compile(args.get(++i)) });
            } else if (arg.equals("--verbose")) {
                verbose = true;
            } else if (arg.equals("--add-exports") || arg.equals("--add-opens") || arg.equals("--enable-native-access")) {
                require(i + 1 < args.size(), arg + " needs a value", origin);
                builderArgs.addAll(translate(arg + "=" + args.get(++i), origin));
            } else if (arg.startsWith("--")) {
                builderArgs.addAll(translate(arg, origin));
            } else if (arg.startsWith("-march=")) {
                builderArgs.add("-H:MicroArchitecture=" + arg.substring("-march=".length()));
            } else if (arg.startsWith("-O")) {
                builderArgs.add("-H:Optimize=" + arg.substring(2));
            } else if (arg.equals("-g")) {
                builderArgs.add("-H:GenerateDebugInfo=2");
            } else if (!arg.startsWith("-") && commandLine) {
                positional.add(arg);
            } else {
                throw new IllegalArgumentException("native-image stand-in: unknown option '" + arg + "' in " + origin
                        + " (native-toolchain/README.md lists what it translates)");
            }
        }
    }

    /** The driver's API options, as the @APIOption annotations of the builder map them. */
    List<String> translate(String arg, String origin) {
        int eq = arg.indexOf('=');
        String option = eq < 0 ? arg : arg.substring(0, eq);
        String value = eq < 0 ? null : arg.substring(eq + 1);
        switch (option) {
            case "--features":
                return List.of(apiOption("Features", value));
            case "--initialize-at-run-time":
                return List.of(apiOption("ClassInitialization", classInit(value, ":run_time")));
            case "--initialize-at-build-time":
                return List.of(apiOption("ClassInitialization", classInit(value, ":build_time")));
            case "--no-fallback":
                return List.of("-H:FallbackThreshold=0");
            case "--link-at-build-time":
                return List.of(apiOption("LinkAtBuildTime", value == null ? "" : value));
            case "--enable-url-protocols":
                return List.of(apiOption("EnableURLProtocols", value));
            case "--enable-http":
                return List.of(apiOption("EnableURLProtocols", "http"));
            case "--enable-https":
                return List.of(apiOption("EnableURLProtocols", "https"));
            case "--enable-all-security-services":
                return List.of();
            case "--enable-monitoring":
                return List.of(apiOption("EnableMonitoringFeatures", value == null ? "all" : value));
            case "--add-exports":
                return List.of(apiOption("AddExports", value));
            case "--add-opens":
                return List.of(apiOption("AddOpens", value));
            case "--enable-native-access":
                return List.of(apiOption("EnableNativeAccess", value));
            case "--report-unsupported-elements-at-runtime":
                return List.of("-H:+ReportUnsupportedElementsAtRuntime");
            case "--allow-incomplete-classpath":
                return List.of();
            case "--gc":
                require(value != null && !value.isEmpty(), "--gc needs a collector (serial, epsilon)", origin);
                return List.of("-H:+Use" + Character.toUpperCase(value.charAt(0)) + value.substring(1) + "GC");
            case "--parallelism":
                return List.of(apiOption("NumberOfThreads", value));
            case "--trace-class-initialization":
                return List.of(apiOption("TraceClassInitialization", value));
            case "--trace-object-instantiation":
                return List.of(apiOption("TraceObjectInstantiation", value));
            case "--add-modules":
                jvmArgs.add("--add-modules=" + value);
                return List.of();
            case "--static":
                return List.of("-H:+StaticExecutable");
            default:
                throw new IllegalArgumentException("native-image stand-in: unknown option '" + arg + "' in " + origin
                        + " (native-toolchain/README.md lists what it translates)");
        }
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

    static String apiOption(String name, String value) {
        return "-H:" + name + "=" + (value == null ? "" : value);
    }

    static String classInit(String value, String suffix) {
        if (value == null || value.isEmpty()) {
            return suffix;
        }
        List<String> entries = new ArrayList<>();
        for (String entry : value.split(",")) {
            if (!entry.isBlank()) {
                entries.add(entry.trim() + suffix);
            }
        }
        return String.join(",", entries);
    }

    /** native-image [options] <main class> [image name], or native-image [options] -jar <jar> [image name]. */
    void positionals() {
        List<String> rest = new ArrayList<>(positional);
        if (!fromJar && !rest.isEmpty()) {
            mainClass = rest.remove(0);
            if (name == null) {
                name = mainClass.toLowerCase(java.util.Locale.ROOT);
            }
        }
        if (!rest.isEmpty()) {
            name = rest.remove(0);
        }
        require(rest.isEmpty(), "unexpected arguments " + rest, "command line");
        require(mainClass != null, "no main class: name one, or give -jar with a Main-Class", "command line");
    }

    static void require(boolean condition, String message, String origin) {
        if (!condition) {
            throw new IllegalArgumentException("native-image stand-in: " + message + " (" + origin + ")");
        }
    }

    void addJar(Path path, boolean main) {
        if (!classpath.add(path.toString())) {
            return;
        }
        if (!Files.isRegularFile(path)) {
            return;
        }
        try (JarFile jar = new JarFile(path.toFile())) {
            if (jar.getManifest() == null) {
                return;
            }
            Attributes attributes = jar.getManifest().getMainAttributes();
            if (main) {
                fromJar = true;
                mainClass = attributes.getValue(Attributes.Name.MAIN_CLASS);
                // as `java -jar` would: the main jar's Add-Opens, Add-Exports and Enable-Native-Access apply
                if ("ALL-UNNAMED".equals(attributes.getValue("Enable-Native-Access"))) {
                    jvmArgs.add("--enable-native-access=ALL-UNNAMED");
                }
                for (String[] access : new String[][] { { "Add-Opens", "AddOpens" }, { "Add-Exports", "AddExports" } }) {
                    String value = attributes.getValue(access[0]);
                    if (value != null) {
                        for (String modulePackage : value.trim().split("\\s+")) {
                            builderArgs.add("-H:" + access[1] + "=" + modulePackage + "=ALL-UNNAMED");
                        }
                    }
                }
                if (name == null) {
                    String file = path.getFileName().toString();
                    name = file.endsWith(".jar") ? file.substring(0, file.length() - 4) : file;
                }
            }
            String manifestClassPath = attributes.getValue(Attributes.Name.CLASS_PATH);
            if (manifestClassPath != null) {
                for (String entry : manifestClassPath.trim().split("\\s+")) {
                    addJar(path.getParent().resolve(entry).normalize(), false);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("native-image stand-in: cannot read " + path, e);
        }
    }

    /** What the real driver takes from each class-path entry's META-INF/native-image: Args, JavaArgs, metadata. */
    void readJarMetadata() throws IOException {
        for (String entry : List.copyOf(classpath)) {
            Path path = Path.of(entry);
            if (!Files.isRegularFile(path)) {
                continue;
            }
            try (JarFile jar = new JarFile(path.toFile())) {
                Enumeration<JarEntry> entries = jar.entries();
                while (entries.hasMoreElements()) {
                    JarEntry e = entries.nextElement();
                    String resource = e.getName();
                    if (!resource.startsWith("META-INF/native-image/") || e.isDirectory() || excluded(path, resource)) {
                        continue;
                    }
                    String file = resource.substring(resource.lastIndexOf('/') + 1);
                    String dir = resource.substring(0, resource.lastIndexOf('/'));
                    if (file.equals("native-image.properties")) {
                        Properties properties = new Properties();
                        try (InputStream in = jar.getInputStream(e)) {
                            properties.load(in);
                        }
                        String origin = path.getFileName() + "!/" + resource;
                        parse(split(properties.getProperty("Args", ""), dir), origin,
                                "jar:" + path.toUri() + "!/" + resource, false);
                        if (properties.getProperty("ImageName") != null && name == null) {
                            name = properties.getProperty("ImageName");
                        }
                        for (String javaArg : split(properties.getProperty("JavaArgs", ""), dir)) {
                            jvmArgs.add(javaArg);
                        }
                    } else if (METADATA.containsKey(file)) {
                        builderArgs.add("-H:" + METADATA.get(file) + "=" + resource);
                    }
                }
            }
        }
    }

    boolean excluded(Path jar, String resource) {
        for (Pattern[] p : excludedConfig) {
            if (p[0].matcher(jar.toString()).find() && p[1].matcher("/" + resource).find()) {
                return true;
            }
        }
        return false;
    }

    static List<String> split(String args, String dir) {
        List<String> result = new ArrayList<>();
        for (String arg : args.replace("${.}", dir).trim().split("\\s+")) {
            if (!arg.isEmpty()) {
                result.add(arg);
            }
        }
        return result;
    }

    int build() throws IOException, InterruptedException {
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
        command.addAll(jvmArgs);
        command.add("--module-path");
        command.add(String.join(":", modules));
        command.add("--module");
        command.add("org.graalvm.nativeimage.builder/com.oracle.svm.hosted.NativeImageGeneratorRunner");
        command.add("-imagecp");
        command.add(String.join(":", classpath));
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
        command.addAll(builderArgs);
        if (mainClass != null) {
            command.add("-H:Class=" + mainClass);
        }
        if (name != null) {
            command.add("-H:Name=" + name);
        }
        command.add("-H:ImageBuildID=" + UUID.randomUUID());
        if (verbose) {
            System.out.println(String.join(" ", command));
        }
        ProcessBuilder builderProcess = new ProcessBuilder(command).inheritIO();
        builderProcess.environment().putAll(environment);
        return builderProcess.start().waitFor();
    }
}
