package io.quarkiverse.mysqllock.deployment.operability;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkus.builder.BuildChainBuilder;
import io.quarkus.builder.BuildContext;
import io.quarkus.builder.BuildStep;
import io.quarkus.deployment.builditem.RemovedResourceBuildItem;
import io.quarkus.deployment.builditem.nativeimage.NativeImageResourceBuildItem;
import io.quarkus.deployment.builditem.nativeimage.ReflectiveClassBuildItem;
import io.quarkus.deployment.builditem.nativeimage.RuntimeInitializedClassBuildItem;
import io.quarkus.test.QuarkusUnitTest;

/**
 * What a native image needs, checked at the build-step level (the native build of integration-tests checks the whole):
 * the lock table's DDL is a native resource, and the extension's own classes need no reflection (Gizmo-generated name
 * resolvers instead, every engine created at run time): the only registrations of its classes are the ones Quarkus
 * makes for its config mappings and ArC for the interceptor binding. Two classes are initialised at run time: the
 * leak finder, whose cleaner and release threads must be the running application's (a cleaner made at build time has
 * no thread in the image, and would never release a leaked hold), and the holder that loads the Kotlin {@code suspend}
 * support by name, which a build-time initialisation would try (and fail) to load in every application without
 * Kotlin; and that support ({@code SuspendCall}) is left out of an application without
 * {@code suspend} functions.
 */
class NativeRegistrationsTest {

    static final String RESULT = "mysql-lock.native-registrations";

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app().addBuildChainCustomizer(inspect());

    static Consumer<BuildChainBuilder> inspect() {
        return chain -> chain.addBuildStep(new BuildStep() {
            @Override
            public void execute(BuildContext context) {
                List<NativeImageResourceBuildItem> resources = context.consumeMulti(NativeImageResourceBuildItem.class);
                boolean ddl = resources.stream().anyMatch(r -> r.getResources().contains(LockTable.DDL_RESOURCE));
                String reflective = context.consumeMulti(ReflectiveClassBuildItem.class).stream()
                        .flatMap(r -> r.getClassNames().stream()).filter(c -> c.startsWith("io.quarkiverse.mysqllock"))
                        .sorted().distinct().collect(java.util.stream.Collectors.joining(" "));
                String runtimeInit = context.consumeMulti(RuntimeInitializedClassBuildItem.class).stream()
                        .map(RuntimeInitializedClassBuildItem::getClassName)
                        .filter(c -> c.startsWith("io.quarkiverse.mysqllock")).sorted().distinct()
                        .collect(java.util.stream.Collectors.joining(" "));
                String removed = context.consumeMulti(RemovedResourceBuildItem.class).stream()
                        .filter(r -> r.getArtifact().getArtifactId().equals("quarkus-mysql-lock"))
                        .flatMap(r -> r.getResources().stream()).sorted().collect(java.util.stream.Collectors.joining(" "));
                // a system property: the test method runs in another class loader than this build step
                System.setProperty(RESULT, "ddl=" + ddl + ",reflective=" + reflective + ",runtimeInit=" + runtimeInit
                        + ",removed=" + removed);
                context.produce(new io.quarkus.deployment.builditem.FeatureBuildItem("native-registrations-check"));
            }
        }).consumes(NativeImageResourceBuildItem.class).consumes(ReflectiveClassBuildItem.class)
                .consumes(RuntimeInitializedClassBuildItem.class)
                .consumes(RemovedResourceBuildItem.class)
                .produces(io.quarkus.deployment.builditem.FeatureBuildItem.class).build();
    }

    @Test
    void theDdlIsANativeResourceAndOnlyQuarkusRegistersReflection() {
        String[] result = System.getProperty(RESULT).split(",");
        assertThat(result[0]).isEqualTo("ddl=true");
        // the native build failed without them: "Class initialization of ...Suspending$Holder failed" (Kotlin absent),
        // then "Detected a java.lang.ref.Cleaner object in the image heap" (HoldLeaks' cleaner and its thread)
        assertThat(result[2]).isEqualTo("runtimeInit=io.quarkiverse.mysqllock.runtime.engine.HoldLeaks"
                + " io.quarkiverse.mysqllock.runtime.locked.Suspending$Holder");
        // the native build failed next on SuspendCall itself: the builder folds the holder's Class.forName and links the
        // class it names, whose Kotlin types are missing; an application without suspend functions is built without it
        assertThat(result[3]).isEqualTo("removed=io/quarkiverse/mysqllock/runtime/locked/SuspendCall$1.class"
                + " io/quarkiverse/mysqllock/runtime/locked/SuspendCall$Emitting.class"
                + " io/quarkiverse/mysqllock/runtime/locked/SuspendCall.class");
        // Quarkus itself registers the config mappings (and their enums, the jobs' policies among them) and ArC the
        // interceptor bindings (@Locked, @Fenced); the extension's code reflects on no class of its own, so it registers
        // none.
        assertThat(result[1].substring("reflective=".length()).split(" "))
                .allMatch(c -> c.startsWith("io.quarkiverse.mysqllock.runtime.MySqlLock") && c.contains("Config")
                        || c.equals("io.quarkiverse.mysqllock.Locked") || c.equals("io.quarkiverse.mysqllock.Fenced")
                        || c.equals("io.quarkiverse.mysqllock.jobs.MissedTicks")
                        || c.equals("io.quarkiverse.mysqllock.jobs.Overlap"))
                .contains("io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig$$CMImpl");
    }
}
