/*
 * The image's class path (README.md): the jars given, those their manifests' Class-Path name, and what each carries
 * under META-INF/native-image (Args and JavaArgs of its native-image.properties, its metadata files).
 */
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;

final class ClassPath {

    /** Metadata files a jar may carry under META-INF/native-image/, and the builder option that reads each. */
    static final Map<String, String> METADATA = Map.of(
            "reflect-config.json", "ReflectionConfigurationResources",
            "resource-config.json", "ResourceConfigurationResources",
            "jni-config.json", "JNIConfigurationResources",
            "proxy-config.json", "DynamicProxyConfigurationResources",
            "serialization-config.json", "SerializationConfigurationResources",
            "predefined-classes-config.json", "PredefinedClassesConfigurationResources",
            "reachability-metadata.json", "ReachabilityMetadataResources");

    final Invocation call;

    ClassPath(Invocation call) {
        this.call = call;
    }

    /**
     * Adds a class-path entry, and the entries its manifest's Class-Path names; for the -jar jar, also its manifest's
     * main class and module access, and its name as the image's.
     */
    void add(Path path, boolean main) {
        if (!call.classpath.add(path.toString())) {
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
                call.fromJar = true;
                call.mainClass = attributes.getValue(Attributes.Name.MAIN_CLASS);
                // as `java -jar` would: the main jar's Add-Opens, Add-Exports and Enable-Native-Access apply
                if ("ALL-UNNAMED".equals(attributes.getValue("Enable-Native-Access"))) {
                    call.jvmArgs.add("--enable-native-access=ALL-UNNAMED");
                }
                for (String[] access : new String[][] { { "Add-Opens", "AddOpens" }, { "Add-Exports", "AddExports" } }) {
                    String value = attributes.getValue(access[0]);
                    if (value != null) {
                        for (String modulePackage : value.trim().split("\\s+")) {
                            call.builderArgs.add("-H:" + access[1] + "=" + modulePackage + "=ALL-UNNAMED");
                        }
                    }
                }
                if (call.name == null) {
                    String file = path.getFileName().toString();
                    call.name = file.endsWith(".jar") ? file.substring(0, file.length() - 4) : file;
                }
            }
            String manifestClassPath = attributes.getValue(Attributes.Name.CLASS_PATH);
            if (manifestClassPath != null) {
                for (String entry : manifestClassPath.trim().split("\\s+")) {
                    add(path.getParent().resolve(entry).normalize(), false);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("native-image stand-in: cannot read " + path, e);
        }
    }

    /** What the real driver takes from each class-path entry's META-INF/native-image: Args, JavaArgs, metadata. */
    void readJarMetadata(Options options) throws IOException {
        for (String entry : List.copyOf(call.classpath)) {
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
                        options.parse(split(properties.getProperty("Args", ""), dir), origin,
                                "jar:" + path.toUri() + "!/" + resource, false);
                        if (properties.getProperty("ImageName") != null && call.name == null) {
                            call.name = properties.getProperty("ImageName");
                        }
                        for (String javaArg : split(properties.getProperty("JavaArgs", ""), dir)) {
                            call.jvmArgs.add(javaArg);
                        }
                    } else if (METADATA.containsKey(file)) {
                        call.builderArgs.add("-H:" + METADATA.get(file) + "=" + resource);
                    }
                }
            }
        }
    }

    boolean excluded(Path jar, String resource) {
        for (Pattern[] p : call.excludedConfig) {
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
}
