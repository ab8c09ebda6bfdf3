/*
 * A small stand-in for GraalVM's `native-image` driver, which is not published on Maven Central. It reads the options
 * ({@link Options}) and the class path ({@link ClassPath}), and starts the builder ({@link Builder}). See README.md.
 */
import java.nio.file.Path;
import java.util.List;

public class NativeImage {

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && (args[0].equals("--version") || args[0].equals("-version"))) {
            Builder.printVersion();
            return;
        }
        Invocation call = new Invocation();
        ClassPath classPath = new ClassPath(call);
        Options options = new Options(call, classPath);
        options.parse(List.of(args), "command line", null, true);
        options.positionals();
        classPath.readJarMetadata(options);
        System.exit(Builder.run(Path.of(System.getProperty("qml.graalvm.home")), call));
    }
}
