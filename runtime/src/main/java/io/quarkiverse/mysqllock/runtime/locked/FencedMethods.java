package io.quarkiverse.mysqllock.runtime.locked;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The lock names of this application's {@code @Fenced} methods, recorded at build time by {@link LockedMethodKey}: a
 * written-out name, or the resolver that builds it from the arguments. A synthetic {@code @Singleton} bean.
 */
public final class FencedMethods {

    /**
     * One method's lock: {@code fixedName}, or {@code resolver} when its template has placeholders; {@code dataSource}
     * whose lock table keeps its tokens, null for the lock datasource.
     */
    public record FencedMethod(String fixedName, LockNameResolver resolver, String dataSource) {

        String lock(Object[] arguments) {
            return resolver == null ? fixedName : resolver.resolve(arguments);
        }
    }

    private final Map<String, FencedMethod> byKey;
    private final Map<Method, FencedMethod> byMethod = new ConcurrentHashMap<>();

    FencedMethods(Map<String, FencedMethod> byKey) {
        this.byKey = Map.copyOf(byKey);
    }

    /** The record of {@code method}. */
    FencedMethod of(Method method) {
        FencedMethod found = byMethod.get(method);
        if (found == null) {
            String key = LockedMethodKey.of(method);
            found = byKey.get(key);
            if (found == null) {
                throw new IllegalStateException("No build-time record of @Fenced method " + key
                        + ": was it added to the application without a rebuild?");
            }
            byMethod.put(method, found);
        }
        return found;
    }
}
