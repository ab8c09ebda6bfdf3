package io.quarkiverse.mysqllock.runtime.locked;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** The application's {@code @WhileLeader} methods, recorded at build time: a synthetic bean. */
public final class LeaderMethods {

    private final List<LeaderMethod> methods;

    LeaderMethods(List<LeaderMethod> methods) {
        this.methods = List.copyOf(methods);
    }

    Set<String> roles() {
        Set<String> roles = new TreeSet<>();
        methods.forEach(method -> roles.add(method.role));
        return roles;
    }

    List<LeaderMethod> of(String role) {
        return methods.stream().filter(method -> method.role.equals(role)).toList();
    }
}
