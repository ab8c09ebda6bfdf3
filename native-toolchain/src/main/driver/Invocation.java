import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** What one native-image call asks for, as {@link Options} and {@link ClassPath} collect it for {@link Builder}. */
final class Invocation {
    /** The builder JVM's options (-J, -D, a jar's JavaArgs). */
    final List<String> jvmArgs = new ArrayList<>();
    /** The builder's own options (-H:...), translated. */
    final List<String> builderArgs = new ArrayList<>();
    final Set<String> classpath = new LinkedHashSet<>();
    /** --exclude-config: a jar pattern and a resource pattern each. */
    final List<Pattern[]> excludedConfig = new ArrayList<>();
    /** -E: variables set for the builder. */
    final Map<String, String> environment = new LinkedHashMap<>();
    /** The command line's arguments that are not options: the main class, the image's name. */
    final List<String> positional = new ArrayList<>();
    String name;
    String mainClass;
    boolean fromJar;
    boolean verbose;
}
