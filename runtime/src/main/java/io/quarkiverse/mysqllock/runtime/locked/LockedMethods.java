package io.quarkiverse.mysqllock.runtime.locked;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The table of this application's {@code @Locked} methods, recorded at build time and keyed by
 * {@link LockedMethodKey}; a synthetic {@code @Singleton} bean that the interceptor injects. Each intercepted
 * {@link Method} is looked up by its key once, then found by the method itself.
 */
public final class LockedMethods {

    private final Map<String, LockedMethod> byKey;
    private final Map<Method, LockedMethod> byMethod = new ConcurrentHashMap<>();

    LockedMethods(Map<String, LockedMethod> byKey) {
        this.byKey = Map.copyOf(byKey);
    }

    /** Every {@code @Locked} method of the application. */
    java.util.Collection<LockedMethod> all() {
        return byKey.values();
    }

    /** The names of the application's scheduled jobs whose names are written out, sorted. */
    java.util.List<String> jobNames() {
        return byKey.values().stream().map(LockedMethod::jobName).filter(java.util.Objects::nonNull).sorted()
                .distinct().toList();
    }

    /** Whether a scheduled job's name is built from its parameters: then any name may be one of its jobs. */
    boolean hasJobNameTemplates() {
        return byKey.values().stream().anyMatch(method -> method.tickParameter >= 0 && method.hasNameTemplate());
    }

    LockedMethod of(Method method) {
        LockedMethod found = byMethod.get(method);
        if (found == null) {
            String key = LockedMethodKey.of(method);
            found = byKey.get(key);
            if (found == null) {
                throw new IllegalStateException("No build-time record of @Locked method " + key
                        + ": was it added to the application without a rebuild?");
            }
            byMethod.put(method, found);
        }
        return found;
    }
}
