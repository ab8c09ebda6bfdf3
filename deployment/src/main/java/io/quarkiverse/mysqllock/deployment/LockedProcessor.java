package io.quarkiverse.mysqllock.deployment;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import jakarta.enterprise.inject.spi.DeploymentException;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTarget;
import org.jboss.jandex.AnnotationValue;
import org.jboss.jandex.ClassInfo;
import org.jboss.jandex.DotName;
import org.jboss.jandex.FieldInfo;
import org.jboss.jandex.IndexView;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.Type;
import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.runtime.locked.LateReleases;
import io.quarkiverse.mysqllock.runtime.locked.LockNameResolver;
import io.quarkiverse.mysqllock.runtime.locked.LockedInterceptor;
import io.quarkiverse.mysqllock.runtime.locked.LockedRecorder;
import io.quarkiverse.mysqllock.runtime.locked.ReturnKind;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.deployment.GeneratedClassGizmoAdaptor;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;
import io.quarkus.deployment.builditem.GeneratedClassBuildItem;
import io.quarkus.deployment.recording.RecorderContext;
import io.quarkus.gizmo.AssignableResultHandle;
import io.quarkus.gizmo.BytecodeCreator;
import io.quarkus.gizmo.ClassCreator;
import io.quarkus.gizmo.MethodCreator;
import io.quarkus.gizmo.MethodDescriptor;
import io.quarkus.gizmo.ResultHandle;
import io.quarkus.runtime.RuntimeValue;
import io.quarkus.runtime.configuration.DurationConverter;

/**
 * Finds every {@code @Locked} method at build time, checks it, and records what the interceptor needs: the lock name
 * (fixed, or a generated resolver that reads the arguments without reflection), the durations and the return kind.
 */
class LockedProcessor {

    private static final Logger LOG = Logger.getLogger(LockedProcessor.class);
    static final DotName LOCKED = DotName.createSimple(Locked.class);
    private static final DotName UNI = DotName.createSimple("io.smallrye.mutiny.Uni");
    private static final DotName MULTI = DotName.createSimple("io.smallrye.mutiny.Multi");
    private static final DotName COMPLETION_STAGE = DotName.createSimple("java.util.concurrent.CompletionStage");
    private static final DotName COMPLETABLE_FUTURE = DotName.createSimple("java.util.concurrent.CompletableFuture");
    private static final DotName OPTIONAL = DotName.createSimple("java.util.Optional");
    private static final DotName SCHEDULED_EXECUTION = DotName.createSimple("io.quarkus.scheduler.ScheduledExecution");
    private static final DotName SCHEDULED = DotName.createSimple("io.quarkus.scheduler.Scheduled");
    private static final DotName SCHEDULES = DotName.createSimple("io.quarkus.scheduler.Scheduled$Schedules");
    private static final DotName OBJECT = DotName.createSimple(Object.class);
    private static final String RESOLVER_PACKAGE = "io.quarkiverse.mysqllock.generated.";

    @BuildStep
    AdditionalBeanBuildItem interceptor() {
        return AdditionalBeanBuildItem.builder().addBeanClasses(LockedInterceptor.class, LateReleases.class)
                .setUnremovable().build();
    }

    @BuildStep
    @Record(ExecutionTime.STATIC_INIT)
    void lockedMethods(CombinedIndexBuildItem combinedIndex, LockedRecorder recorder, RecorderContext recorderContext,
            BuildProducer<GeneratedClassBuildItem> generatedClasses) {
        IndexView index = combinedIndex.getIndex();
        Map<String, Target> targets = new TreeMap<>(); // sorted: reproducible bytecode
        List<String> errors = new ArrayList<>();
        // Class-level annotations first; a method's own annotation then replaces its class's.
        for (AnnotationInstance annotation : index.getAnnotations(LOCKED)) {
            if (annotation.target().kind() == AnnotationTarget.Kind.CLASS) {
                ClassInfo type = annotation.target().asClass();
                for (MethodInfo method : type.methods()) {
                    if (isBusinessMethod(method)) {
                        targets.put(key(method), new Target(method, annotation));
                    }
                }
            }
        }
        for (AnnotationInstance annotation : index.getAnnotations(LOCKED)) {
            if (annotation.target().kind() == AnnotationTarget.Kind.METHOD) {
                MethodInfo method = annotation.target().asMethod();
                if (Modifier.isPrivate(method.flags()) || Modifier.isStatic(method.flags())) {
                    errors.add(describe(method) + " is " + (Modifier.isPrivate(method.flags()) ? "private" : "static")
                            + ": interceptors do not apply to it. Make it a non-private instance method of a bean");
                    continue;
                }
                targets.put(key(method), new Target(method, annotation));
            }
        }

        ClassOutput output = new ClassOutput(generatedClasses);
        recorder.reset();
        for (Map.Entry<String, Target> entry : targets.entrySet()) {
            Target target = entry.getValue();
            MethodInfo method = target.method();
            String description = describe(method);
            int before = errors.size();
            ReturnKind kind = returnKind(method, errors);
            Duration wait = duration(target.annotation(), "waitFor", "0s", description, errors);
            Duration atLeastFor = duration(target.annotation(), "atLeastFor", "0s", description, errors);
            OnBusy onBusy = OnBusy.valueOf(stringValue(target.annotation(), "onBusy", OnBusy.FAIL.name()));
            Duration atMostFor = stringValue(target.annotation(), "atMostFor", "").isEmpty() ? Duration.ZERO
                    : duration(target.annotation(), "atMostFor", "", description, errors);
            if (!stringValue(target.annotation(), "atMostFor", "").isEmpty() && atMostFor.toMillis() < 500) {
                errors.add(description + ": atMostFor = \"" + stringValue(target.annotation(), "atMostFor", "")
                        + "\" must be at least 500ms");
            }
            if (onBusy == OnBusy.SKIP && kind == ReturnKind.VALUE && method.returnType().kind() == Type.Kind.PRIMITIVE) {
                errors.add(description + " returns " + method.returnType() + " and has onBusy = SKIP, which returns"
                        + " null: return a reference type, Optional, Uni or CompletionStage, or use onBusy = FAIL");
            }
            String template = stringValue(target.annotation(), "value", "");
            List<LockNameTemplate.Segment> segments;
            try {
                segments = LockNameTemplate
                        .parse(template.isEmpty() ? method.declaringClass().name() + "#" + method.name() : template);
            } catch (IllegalArgumentException e) {
                errors.add(description + ": lock name template \"" + template + "\" is invalid: " + e.getMessage());
                continue;
            }
            List<Placeholder> placeholders = new ArrayList<>();
            StringBuilder fixed = new StringBuilder();
            for (LockNameTemplate.Segment segment : segments) {
                if (segment.isPlaceholder()) {
                    placeholders.add(placeholder(index, method, segment, template, errors));
                } else {
                    fixed.append(segment.literal());
                }
            }
            if (errors.size() > before) {
                continue;
            }
            RuntimeValue<LockNameResolver> resolver = null;
            if (!placeholders.isEmpty()) {
                String className = RESOLVER_PACKAGE + "LockName_" + UUID
                        .nameUUIDFromBytes(entry.getKey().getBytes(StandardCharsets.UTF_8)).toString().replace("-", "");
                generateResolver(output, className, segments, placeholders);
                resolver = recorderContext.newInstance(className);
            }
            recorder.register(entry.getKey(), placeholders.isEmpty() ? fixed.toString() : null, resolver,
                    wait.toMillis(), onBusy, atLeastFor.toMillis(), atMostFor.toMillis(), kind, description,
                    tickParameter(method, onBusy, description));
        }
        if (!errors.isEmpty()) {
            throw new DeploymentException("Invalid @Locked usage:\n- " + String.join("\n- ", errors));
        }
    }

    /**
     * The {@code ScheduledExecution} parameter whose tick a {@code SKIP} method claims, or -1. A scheduled
     * {@code SKIP} method without one gets a warning: only {@code atLeastFor} keeps a late instance from running a
     * tick again.
     */
    private static int tickParameter(MethodInfo method, OnBusy onBusy, String description) {
        if (onBusy != OnBusy.SKIP) {
            return -1;
        }
        for (int i = 0; i < method.parametersCount(); i++) {
            if (method.parameterType(i).name().equals(SCHEDULED_EXECUTION)) {
                return i;
            }
        }
        if (method.hasDeclaredAnnotation(SCHEDULED) || method.hasDeclaredAnnotation(SCHEDULES)) {
            LOG.warnf("%s is @Scheduled and @Locked(onBusy = SKIP) without a ScheduledExecution parameter: an instance"
                    + " whose trigger fires late can run a tick again once the lock is free. Add a ScheduledExecution"
                    + " parameter and each tick runs exactly once across the cluster", description);
        }
        return -1;
    }

    private record Target(MethodInfo method, AnnotationInstance annotation) {
    }

    /** A placeholder resolved against the method: which argument, then which getters or fields in turn. */
    private record Placeholder(int parameter, List<Step> steps) {
    }

    /** One property access: a method ({@code field == null}) or a public field, on {@code owner}. */
    private record Step(ClassInfo owner, MethodInfo getter, FieldInfo field, Type result) {
    }

    private static boolean isBusinessMethod(MethodInfo method) {
        return !method.name().startsWith("<") && !Modifier.isPrivate(method.flags()) && !Modifier.isStatic(method.flags())
                && !method.isSynthetic();
    }

    private static ReturnKind returnKind(MethodInfo method, List<String> errors) {
        Type type = method.returnType();
        if (type.kind() == Type.Kind.VOID) {
            return ReturnKind.VOID;
        }
        DotName name = type.name();
        if (name.equals(MULTI)) {
            errors.add(describe(method) + " returns Multi: a stream has no single end at which to release the lock."
                    + " Return Uni (of a List), or lock inside the stream with LockManager.acquireAsync");
            return ReturnKind.VALUE;
        }
        if (name.equals(UNI)) {
            return ReturnKind.UNI;
        }
        if (name.equals(COMPLETION_STAGE) || name.equals(COMPLETABLE_FUTURE)) {
            return ReturnKind.COMPLETION_STAGE;
        }
        return name.equals(OPTIONAL) ? ReturnKind.OPTIONAL : ReturnKind.VALUE;
    }

    private static Duration duration(AnnotationInstance annotation, String member, String fallback, String description,
            List<String> errors) {
        String text = stringValue(annotation, member, fallback);
        try {
            Duration duration = DurationConverter.parseDuration(text);
            if (duration == null || duration.isNegative()) {
                errors.add(description + ": " + member + " = \"" + text + "\" must be a duration of zero or more");
                return Duration.ZERO;
            }
            return duration;
        } catch (RuntimeException e) {
            errors.add(description + ": " + member + " = \"" + text + "\" is not a duration (use \"5s\", \"500ms\" or"
                    + " \"PT5S\")");
            return Duration.ZERO;
        }
    }

    private static String stringValue(AnnotationInstance annotation, String member, String fallback) {
        AnnotationValue value = annotation.value(member);
        return value == null ? fallback : value.asString();
    }

    private static Placeholder placeholder(IndexView index, MethodInfo method, LockNameTemplate.Segment segment,
            String template, List<String> errors) {
        String description = describe(method);
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

    /** {@code resolve(Object[] args)}: the literals, and each placeholder's value through its steps, null-safe. */
    private static void generateResolver(ClassOutput output, String className, List<LockNameTemplate.Segment> segments,
            List<Placeholder> placeholders) {
        try (ClassCreator creator = ClassCreator.builder().classOutput(output.gizmo()).className(className)
                .interfaces(LockNameResolver.class).build()) {
            MethodCreator resolve = creator.getMethodCreator("resolve", String.class, Object[].class);
            ResultHandle builder = resolve.newInstance(MethodDescriptor.ofConstructor(StringBuilder.class));
            MethodDescriptor appendString = MethodDescriptor.ofMethod(StringBuilder.class, "append", StringBuilder.class,
                    String.class);
            MethodDescriptor valueOf = MethodDescriptor.ofMethod(String.class, "valueOf", String.class, Object.class);
            int next = 0;
            for (LockNameTemplate.Segment segment : segments) {
                if (!segment.isPlaceholder()) {
                    resolve.invokeVirtualMethod(appendString, builder, resolve.load(segment.literal()));
                    continue;
                }
                Placeholder placeholder = placeholders.get(next++);
                AssignableResultHandle value = resolve.createVariable(Object.class);
                resolve.assign(value, resolve.readArrayValue(resolve.getMethodParam(0), placeholder.parameter()));
                for (Step step : placeholder.steps()) {
                    BytecodeCreator present = resolve.ifNotNull(value).trueBranch();
                    ResultHandle owner = present.checkCast(value, step.owner().name().toString());
                    ResultHandle read = step.field() != null ? present.readInstanceField(step.field(), owner)
                            : Modifier.isInterface(step.owner().flags()) ? present.invokeInterfaceMethod(step.getter(), owner)
                                    : present.invokeVirtualMethod(step.getter(), owner);
                    // Primitives end a chain: turn them into their text right away.
                    present.assign(value, step.result().kind() == Type.Kind.PRIMITIVE
                            ? present.invokeStaticMethod(MethodDescriptor.ofMethod(String.class, "valueOf", String.class,
                                    primitive(step.result())), read)
                            : read);
                }
                resolve.invokeVirtualMethod(appendString, builder, resolve.invokeStaticMethod(valueOf, value));
            }
            resolve.returnValue(resolve.invokeVirtualMethod(
                    MethodDescriptor.ofMethod(StringBuilder.class, "toString", String.class), builder));
        }
    }

    private static Class<?> primitive(Type type) {
        return switch (type.asPrimitiveType().primitive()) {
            case BOOLEAN -> boolean.class;
            case BYTE, SHORT, INT -> int.class;
            case CHAR -> char.class;
            case LONG -> long.class;
            case FLOAT -> float.class;
            case DOUBLE -> double.class;
        };
    }

    static String key(MethodInfo method) {
        StringBuilder key = new StringBuilder(method.declaringClass().name().toString()).append('#')
                .append(method.name()).append('(');
        for (int i = 0; i < method.parametersCount(); i++) {
            key.append(i == 0 ? "" : ",").append(erasure(method.parameterType(i)));
        }
        return key.append(')').toString();
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

    static String describe(MethodInfo method) {
        return "@Locked method " + method.declaringClass().name() + "#" + method.name() + "()";
    }

    private static String capitalize(String name) {
        return Character.toUpperCase(name.charAt(0)) + name.substring(1);
    }

    /** Generated resolvers go into the application. */
    private record ClassOutput(BuildProducer<GeneratedClassBuildItem> producer) {
        GeneratedClassGizmoAdaptor gizmo() {
            return new GeneratedClassGizmoAdaptor(producer, true);
        }
    }

    /** java.lang.reflect.Modifier, for Jandex flags. */
    private static final class Modifier {
        static boolean isPrivate(int flags) {
            return java.lang.reflect.Modifier.isPrivate(flags);
        }

        static boolean isStatic(int flags) {
            return java.lang.reflect.Modifier.isStatic(flags);
        }

        static boolean isPublic(int flags) {
            return java.lang.reflect.Modifier.isPublic(flags);
        }

        static boolean isInterface(int flags) {
            return java.lang.reflect.Modifier.isInterface(flags);
        }
    }
}
