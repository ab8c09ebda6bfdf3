package io.quarkiverse.mysqllock.runtime.locked;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * The one format of a {@code @Locked} method's key, {@code <declaring class>#<method>(<parameter types>)}: the build
 * computes it from the index, the interceptor from the {@link Method} it intercepts, and both must agree.
 */
public final class LockedMethodKey {

    private LockedMethodKey() {
    }

    /**
     * @param declaringClass the binary name of the declaring class, as {@code Class.getName()} gives it
     * @param parameterTypes the erasure of each parameter type, as {@code Class.getName()} names it
     */
    public static String of(String declaringClass, String method, List<String> parameterTypes) {
        return declaringClass + '#' + method + '(' + String.join(",", parameterTypes) + ')';
    }

    /** The key of an intercepted method. */
    static String of(Method method) {
        Class<?>[] types = method.getParameterTypes();
        List<String> names = new ArrayList<>(types.length);
        for (Class<?> type : types) {
            names.add(type.getName());
        }
        return of(method.getDeclaringClass().getName(), method.getName(), names);
    }

    /** {@code <declaring class>#<method>}: the key without its parameter types, as {@code LockSkipped} reports it. */
    static String withoutParameters(String key) {
        return key.substring(0, key.indexOf('('));
    }
}
