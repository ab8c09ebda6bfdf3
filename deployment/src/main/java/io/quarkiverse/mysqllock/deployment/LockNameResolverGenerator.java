package io.quarkiverse.mysqllock.deployment;

import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;

import org.jboss.jandex.Type;

import io.quarkiverse.mysqllock.runtime.locked.LockNameResolver;
import io.quarkus.deployment.GeneratedClassGizmoAdaptor;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.builditem.GeneratedClassBuildItem;
import io.quarkus.gizmo.AssignableResultHandle;
import io.quarkus.gizmo.BytecodeCreator;
import io.quarkus.gizmo.ClassCreator;
import io.quarkus.gizmo.MethodCreator;
import io.quarkus.gizmo.MethodDescriptor;
import io.quarkus.gizmo.ResultHandle;

/**
 * Generates the {@link LockNameResolver} of a templated {@code @Locked} method into the application: the literals,
 * and each placeholder's value read through its getters and fields without reflection, null-safe.
 */
final class LockNameResolverGenerator {

    private static final String RESOLVER_PACKAGE = "io.quarkiverse.mysqllock.generated.";

    private LockNameResolverGenerator() {
    }

    /** The resolver's class name: derived from the method's key, so the same application gives the same bytecode. */
    static String className(String key) {
        return RESOLVER_PACKAGE + "LockName_"
                + UUID.nameUUIDFromBytes(key.getBytes(StandardCharsets.UTF_8)).toString().replace("-", "");
    }

    /** {@code resolve(Object[] args)}: the literals, and each placeholder's value through its steps, null-safe. */
    static void generate(BuildProducer<GeneratedClassBuildItem> generatedClasses, String className,
            List<LockNameTemplate.Segment> segments, List<LockNamePlaceholders.Placeholder> placeholders) {
        try (ClassCreator creator = ClassCreator.builder()
                .classOutput(new GeneratedClassGizmoAdaptor(generatedClasses, true)).className(className)
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
                LockNamePlaceholders.Placeholder placeholder = placeholders.get(next++);
                AssignableResultHandle value = resolve.createVariable(Object.class);
                resolve.assign(value, resolve.readArrayValue(resolve.getMethodParam(0), placeholder.parameter()));
                for (LockNamePlaceholders.Step step : placeholder.steps()) {
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
}
