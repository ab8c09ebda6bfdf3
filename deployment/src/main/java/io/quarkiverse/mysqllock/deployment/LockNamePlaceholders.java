package io.quarkiverse.mysqllock.deployment;

import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import org.jboss.jandex.ClassInfo;
import org.jboss.jandex.DotName;
import org.jboss.jandex.FieldInfo;
import org.jboss.jandex.IndexView;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.Type;

/**
 * Resolves the placeholders of a lock name template against the method and the index: which argument, then which
 * record component, getter or public field in turn; a message for each that does not resolve.
 */
final class LockNamePlaceholders {

    private static final DotName OBJECT = DotName.createSimple(Object.class);

    /** A placeholder resolved against the method: which argument, then which getters or fields in turn. */
    record Placeholder(int parameter, List<Step> steps) {
    }

    /** One property access: a method ({@code field == null}) or a public field, on {@code owner}. */
    record Step(ClassInfo owner, MethodInfo getter, FieldInfo field, Type result) {
    }

    private LockNamePlaceholders() {
    }

    /** The placeholder {@code segment} of {@code template} resolved; on failure a message in {@code errors}. */
    static Placeholder resolve(IndexView index, MethodInfo method, LockNameTemplate.Segment segment, String template,
            String description, List<String> errors) {
        int parameter = -1;
        if (Character.isDigit(segment.parameter().charAt(0))) {
            parameter = Integer.parseInt(segment.parameter());
            if (parameter >= method.parametersCount()) {
                errors.add(description + ": lock name template \"" + template + "\" refers to parameter "
                        + parameter + ", but the method has " + method.parametersCount() + " parameter(s)");
                return new Placeholder(0, List.of());
            }
        } else {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < method.parametersCount(); i++) {
                String name = method.parameterName(i);
                if (name == null) {
                    errors.add(description + ": lock name template \"" + template + "\" names a parameter, but the"
                            + " class file has no parameter names. Compile with -parameters (maven-compiler-plugin"
                            + " <parameters>true</parameters>) or use positions: {0}");
                    return new Placeholder(0, List.of());
                }
                names.add(name);
                if (name.equals(segment.parameter())) {
                    parameter = i;
                }
            }
            if (parameter < 0) {
                errors.add(description + ": lock name template \"" + template + "\" refers to parameter '"
                        + segment.parameter() + "', which the method does not have (parameters: "
                        + (names.isEmpty() ? "none" : String.join(", ", names)) + ")");
                return new Placeholder(0, List.of());
            }
        }
        List<Step> steps = new ArrayList<>();
        Type current = method.parameterType(parameter);
        String path = segment.parameter();
        for (String property : segment.properties()) {
            Step step = property(index, current, property);
            if (step == null) {
                errors.add(description + ": lock name template \"" + template + "\" refers to '" + path + "." + property
                        + "', but " + current + " has no record component, getter (get/is" + capitalize(property)
                        + "()) or public field '" + property + "'"
                        + (index.getClassByName(current.name()) == null ? " in the Jandex index" : ""));
                return new Placeholder(parameter, List.of());
            }
            steps.add(step);
            path = path + "." + property;
            current = step.result();
        }
        return new Placeholder(parameter, steps);
    }

    private static Step property(IndexView index, Type type, String property) {
        if (type.kind() != Type.Kind.CLASS && type.kind() != Type.Kind.PARAMETERIZED_TYPE) {
            return null;
        }
        for (ClassInfo owner = index.getClassByName(type.name()); owner != null; owner = owner.superName() == null
                || owner.superName().equals(OBJECT) ? null : index.getClassByName(owner.superName())) {
            for (String name : new String[] { property, "get" + capitalize(property), "is" + capitalize(property) }) {
                MethodInfo getter = owner.method(name);
                if (getter != null && Modifier.isPublic(getter.flags()) && !Modifier.isStatic(getter.flags())
                        && getter.returnType().kind() != Type.Kind.VOID) {
                    return new Step(owner, getter, null, getter.returnType());
                }
            }
            FieldInfo field = owner.field(property);
            if (field != null && Modifier.isPublic(field.flags()) && !Modifier.isStatic(field.flags())) {
                return new Step(owner, null, field, field.type());
            }
        }
        return null;
    }

    private static String capitalize(String name) {
        return Character.toUpperCase(name.charAt(0)) + name.substring(1);
    }

    /** A template parsed and its placeholders resolved: its written-out text when it has none. */
    record Resolved(List<LockNameTemplate.Segment> segments, List<Placeholder> placeholders, String fixedName) {

        boolean templated() {
            return !placeholders.isEmpty();
        }
    }

    /**
     * Parses {@code parsed} (the template, or the name it defaults to) and resolves its placeholders against the method;
     * null when it does not, with why in {@code errors}.
     *
     * @param template the template as written, for the messages
     */
    static Resolved parseAndResolve(IndexView index, MethodInfo method, String parsed, String template,
            String description, List<String> errors) {
        List<LockNameTemplate.Segment> segments;
        try {
            segments = LockNameTemplate.parse(parsed);
        } catch (IllegalArgumentException e) {
            errors.add(description + ": lock name template \"" + template + "\" is invalid: " + e.getMessage());
            return null;
        }
        int before = errors.size();
        List<Placeholder> placeholders = new ArrayList<>();
        StringBuilder fixed = new StringBuilder();
        for (LockNameTemplate.Segment segment : segments) {
            if (segment.isPlaceholder()) {
                placeholders.add(resolve(index, method, segment, template, description, errors));
            } else {
                fixed.append(segment.literal());
            }
        }
        return errors.size() > before ? null : new Resolved(segments, placeholders, fixed.toString());
    }
}
