package io.quarkiverse.mysqllock.deployment;

import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTarget;
import org.jboss.jandex.ClassInfo;
import org.jboss.jandex.DotName;
import org.jboss.jandex.IndexView;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.Type;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.runtime.locked.LockedMethodKey;

/**
 * Finds the methods that {@code @Locked} annotations apply to, each with the annotation in effect and its key, in key
 * order. A class's annotation covers its non-private instance methods and those of its subclasses that carry no
 * class-level annotation of their own; a method's own annotation replaces it.
 */
final class LockedMethodScanner {

    private static final DotName LOCKED = DotName.createSimple(Locked.class);

    private LockedMethodScanner() {
    }

    static List<LockedMethodBuildItem> scan(IndexView index) {
        Map<String, LockedMethodBuildItem> found = new TreeMap<>(); // sorted: reproducible bytecode
        // Class-level annotations first; a method's own annotation then replaces its class's.
        for (AnnotationInstance annotation : index.getAnnotations(LOCKED)) {
            if (annotation.target().kind() == AnnotationTarget.Kind.CLASS) {
                ClassInfo type = annotation.target().asClass();
                putBusinessMethods(found, type, annotation);
                // @Locked is @Inherited: CDI binds the interceptor to the methods subclasses declare too, under the
                // nearest annotated ancestor's annotation.
                for (ClassInfo subclass : index.getAllKnownSubclasses(type.name())) {
                    if (nearestAnnotatedClass(index, subclass) == type) {
                        putBusinessMethods(found, subclass, annotation);
                    }
                }
            }
        }
        for (AnnotationInstance annotation : index.getAnnotations(LOCKED)) {
            if (annotation.target().kind() == AnnotationTarget.Kind.METHOD
                    && !isSuspendBody(annotation.target().asMethod())) {
                put(found, annotation.target().asMethod(), annotation);
            }
        }
        return new ArrayList<>(found.values());
    }

    private static void putBusinessMethods(Map<String, LockedMethodBuildItem> found, ClassInfo type,
            AnnotationInstance annotation) {
        for (MethodInfo method : type.methods()) {
            if (isBusinessMethod(method)) {
                put(found, method, annotation);
            }
        }
    }

    /** The class whose class-level {@code @Locked} a class has: its own, or its nearest superclass's. */
    private static ClassInfo nearestAnnotatedClass(IndexView index, ClassInfo type) {
        for (ClassInfo current = type; current != null; current = current.superName() == null ? null
                : index.getClassByName(current.superName())) {
            if (current.declaredAnnotation(LOCKED) != null) {
                return current;
            }
        }
        return null;
    }

    private static void put(Map<String, LockedMethodBuildItem> found, MethodInfo method, AnnotationInstance annotation) {
        String key = key(method);
        found.put(key, new LockedMethodBuildItem(key, method, annotation));
    }

    /**
     * The static body kotlinc gives an open {@code suspend} function ({@code name$suspendImpl(this, ..., continuation)}),
     * with the function's annotations: the function itself, which calls it, is the one intercepted.
     */
    private static boolean isSuspendBody(MethodInfo method) {
        return Modifier.isStatic(method.flags()) && method.name().endsWith("$suspendImpl");
    }

    private static boolean isBusinessMethod(MethodInfo method) {
        return !method.name().startsWith("<") && !Modifier.isPrivate(method.flags()) && !Modifier.isStatic(method.flags())
                && !method.isSynthetic();
    }

    /** The {@link LockedMethodKey} of a method in the index, with the names {@code Class.getName()} gives at run time. */
    static String key(MethodInfo method) {
        List<String> parameterTypes = new ArrayList<>(method.parametersCount());
        for (int i = 0; i < method.parametersCount(); i++) {
            parameterTypes.add(erasure(method.parameterType(i)));
        }
        return LockedMethodKey.of(method.declaringClass().name().toString(), method.name(), parameterTypes);
    }

    /** The name {@code Class.getName()} gives the erasure of a type. */
    private static String erasure(Type type) {
        return switch (type.kind()) {
            case TYPE_VARIABLE -> type.asTypeVariable().bounds().isEmpty() ? "java.lang.Object"
                    : erasure(type.asTypeVariable().bounds().get(0));
            case ARRAY -> "[".repeat(type.asArrayType().dimensions()) + descriptor(type.asArrayType().constituent());
            default -> type.name().toString();
        };
    }

    private static String descriptor(Type type) {
        if (type.kind() == Type.Kind.PRIMITIVE) {
            return switch (type.asPrimitiveType().primitive()) {
                case BOOLEAN -> "Z";
                case BYTE -> "B";
                case SHORT -> "S";
                case INT -> "I";
                case CHAR -> "C";
                case LONG -> "J";
                case FLOAT -> "F";
                case DOUBLE -> "D";
            };
        }
        return "L" + erasure(type) + ";";
    }
}
