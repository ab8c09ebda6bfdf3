/*
 * The driver's options (README.md): what the command line and each jar's native-image.properties ask for, translated
 * into the builder's options (the @APIOption annotations of the builder map them). An option it does not know stops it
 * with its name: it never drops one silently.
 */
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

final class Options {

    final Invocation call;
    final ClassPath classPath;

    Options(Invocation call, ClassPath classPath) {
        this.call = call;
        this.classPath = classPath;
    }

    /**
     * Reads driver options. {@code originUri} is the native-image.properties file they come from (null on the command
     * line): the builder options made of them carry it, as the real driver's do, so that an option such as
     * --link-at-build-time without a value applies to that jar only.
     */
    void parse(List<String> args, String origin, String originUri, boolean commandLine) {
        int before = call.builderArgs.size();
        parseOptions(args, origin, commandLine);
        if (originUri != null) {
            for (int i = before; i < call.builderArgs.size(); i++) {
                call.builderArgs.set(i, withOrigin(call.builderArgs.get(i), originUri));
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
                call.jvmArgs.add(arg.substring(2));
            } else if (arg.startsWith("-D")) {
                call.jvmArgs.add(arg);
            } else if (arg.startsWith("-H:")) {
                call.builderArgs.add(arg);
            } else if (arg.startsWith("-E")) {
                // -Ekey=value sets a variable for the builder; -Ekey passes the driver's own (the rest is inherited)
                String variable = arg.substring(2);
                int eq = variable.indexOf('=');
                require(!variable.isEmpty() && eq != 0, "-E needs a variable name", origin);
                if (eq > 0) {
                    call.environment.put(variable.substring(0, eq), variable.substring(eq + 1));
                }
            } else if (arg.equals("-jar")) {
                require(commandLine && i + 1 < args.size(), "-jar needs a jar", origin);
                classPath.add(Path.of(args.get(++i)).toAbsolutePath(), true);
            } else if (arg.equals("-cp") || arg.equals("--class-path") || arg.equals("-call.classpath")) {
                require(i + 1 < args.size(), arg + " needs a class path", origin);
                for (String entry : args.get(++i).split(":")) {
                    classPath.add(Path.of(entry.isEmpty() ? "." : entry).toAbsolutePath(), false);
                }
            } else if (arg.equals("-o")) {
                require(i + 1 < args.size(), "-o needs a name", origin);
                call.name = args.get(++i);
            } else if (arg.equals("--exclude-config")) {
                require(i + 2 < args.size(), "--exclude-config needs a jar pattern and a resource pattern", origin);
                call.excludedConfig.add(new Pattern[] { Pattern.compile(args.get(++i)), Pattern.compile(args.get(++i)) });
            } else if (arg.equals("--call.verbose")) {
                call.verbose = true;
            } else if (arg.equals("--add-exports") || arg.equals("--add-opens") || arg.equals("--enable-native-access")) {
                require(i + 1 < args.size(), arg + " needs a value", origin);
                call.builderArgs.addAll(translate(arg + "=" + args.get(++i), origin));
            } else if (arg.startsWith("--")) {
                call.builderArgs.addAll(translate(arg, origin));
            } else if (arg.startsWith("-march=")) {
                call.builderArgs.add("-H:MicroArchitecture=" + arg.substring("-march=".length()));
            } else if (arg.startsWith("-O")) {
                call.builderArgs.add("-H:Optimize=" + arg.substring(2));
            } else if (arg.equals("-g")) {
                call.builderArgs.add("-H:GenerateDebugInfo=2");
            } else if (!arg.startsWith("-") && commandLine) {
                call.positional.add(arg);
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
            case "--allow-incomplete-call.classpath":
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
                call.jvmArgs.add("--add-modules=" + value);
                return List.of();
            case "--static":
                return List.of("-H:+StaticExecutable");
            default:
                throw new IllegalArgumentException("native-image stand-in: unknown option '" + arg + "' in " + origin
                        + " (native-toolchain/README.md lists what it translates)");
        }
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
        List<String> rest = new ArrayList<>(call.positional);
        if (!call.fromJar && !rest.isEmpty()) {
            call.mainClass = rest.remove(0);
            if (call.name == null) {
                call.name = call.mainClass.toLowerCase(java.util.Locale.ROOT);
            }
        }
        if (!rest.isEmpty()) {
            call.name = rest.remove(0);
        }
        require(rest.isEmpty(), "unexpected arguments " + rest, "command line");
        require(call.mainClass != null, "no main class: name one, or give -jar with a Main-Class", "command line");
    }

    static void require(boolean condition, String message, String origin) {
        if (!condition) {
            throw new IllegalArgumentException("native-image stand-in: " + message + " (" + origin + ")");
        }
    }
}
