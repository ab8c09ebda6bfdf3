package io.quarkiverse.mysqllock.runtime.locked;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The table of {@code @Locked} methods, recorded at build time and keyed by
 * {@code <declaring class>#<method>(<parameter types>)}.
 */
public final class LockedMethods {

    private static final Map<String, LockedMethod> BY_KEY = new ConcurrentHashMap<>();
    private static final Map<Method, LockedMethod> BY_METHOD = new ConcurrentHashMap<>();

    private LockedMethods() {
    }

    /** Forgets the previous application's methods (dev-mode restarts run in the same JVM). */
    static void clear() {
        BY_KEY.clear();
        BY_METHOD.clear();
    }

    static void register(String key, LockedMethod method) {
        BY_KEY.put(key, method);
    }

    static LockedMethod of(Method method) {
        LockedMethod found = BY_METHOD.get(method);
        if (found == null) {
            found = BY_KEY.get(key(method));
            if (found == null) {
                throw new IllegalStateException("No build-time record of @Locked method " + key(method)
                        + ": was it added to the application without a rebuild?");
            }
            BY_METHOD.put(method, found);
        }
        return found;
    }

    /** The key of a method; the build step computes the same string from the index. */
    public static String key(Method method) {
        StringBuilder key = new StringBuilder(method.getDeclaringClass().getName()).append('#').append(method.getName())
                .append('(');
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            key.append(i == 0 ? "" : ",").append(types[i].getName());
        }
        return key.append(')').toString();
    }
}
