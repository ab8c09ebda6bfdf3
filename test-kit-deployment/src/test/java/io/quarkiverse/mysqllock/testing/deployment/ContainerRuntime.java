package io.quarkiverse.mysqllock.testing.deployment;

import java.util.function.Consumer;

import io.quarkus.builder.BuildChainBuilder;
import io.quarkus.builder.BuildContext;
import io.quarkus.builder.BuildStep;
import io.quarkus.deployment.builditem.DevServicesResultBuildItem;
import io.quarkus.deployment.builditem.DockerStatusBuildItem;
import io.quarkus.deployment.builditem.FeatureBuildItem;

/**
 * What Quarkus decided while it built the test's application, told to the test through system properties (the test
 * runs in another class loader than the build): whether it found a container runtime, and how many embedded MariaDB Dev
 * Services it produced.
 */
final class ContainerRuntime {

    private static final String FOUND = "mysql-lock.test.container-runtime";
    private static final String SERVICES = "mysql-lock.test.embedded-services";

    private ContainerRuntime() {
    }

    /** Whether the last application built found one: Quarkus' Dev Services then start containers, not ours. */
    static boolean found() {
        return Boolean.getBoolean(FOUND);
    }

    /** How many embedded MariaDB Dev Services the last application built produced. */
    static long embeddedServices() {
        return Long.getLong(SERVICES, -1);
    }

    /** A build step that tells it, through a system property: the test runs in another class loader than the build. */
    static Consumer<BuildChainBuilder> told() {
        return chain -> chain.addBuildStep(new BuildStep() {
            @Override
            public void execute(BuildContext context) {
                System.setProperty(FOUND,
                        String.valueOf(context.consume(DockerStatusBuildItem.class).isContainerRuntimeAvailable()));
                System.setProperty(SERVICES, String.valueOf(context.consumeMulti(DevServicesResultBuildItem.class).stream()
                        .filter(item -> EmbeddedDevServicesProcessor.FEATURE.equals(item.getName())).count()));
                context.produce(new FeatureBuildItem("container-runtime-check"));
            }
        }).consumes(DockerStatusBuildItem.class).consumes(DevServicesResultBuildItem.class)
                .produces(FeatureBuildItem.class).build();
    }
}
