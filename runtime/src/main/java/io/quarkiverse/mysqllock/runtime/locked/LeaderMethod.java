package io.quarkiverse.mysqllock.runtime.locked;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

import io.quarkiverse.mysqllock.LeadershipGranted;

/** A {@code @WhileLeader} method, resolved once at start-up. */
public final class LeaderMethod {

    /** What the method takes. */
    public enum Parameter {
        NONE,
        /** The term, a {@code long}. */
        TERM,
        /** The {@link LeadershipGranted} event. */
        GRANT
    }

    final String role;
    final Class<?> beanClass;
    final Method method;
    final Parameter parameter;
    final String description;

    LeaderMethod(String role, Class<?> beanClass, Method method, Parameter parameter) {
        this.role = role;
        this.beanClass = beanClass;
        this.method = method;
        this.parameter = parameter;
        this.description = "@WhileLeader(\"" + role + "\") method " + beanClass.getName() + "#" + method.getName() + "()";
    }

    void invoke(Object bean, LeadershipGranted granted) throws InvocationTargetException, IllegalAccessException {
        switch (parameter) {
            case NONE -> method.invoke(bean);
            case TERM -> method.invoke(bean, granted.term());
            case GRANT -> method.invoke(bean, granted);
        }
    }
}
