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
