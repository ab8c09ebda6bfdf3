package io.quarkiverse.mysqllock.testing.deployment;

import java.util.function.Consumer;

import io.quarkus.builder.BuildChainBuilder;
import io.quarkus.builder.BuildContext;
import io.quarkus.builder.BuildStep;
import io.quarkus.deployment.builditem.DockerStatusBuildItem;
import io.quarkus.deployment.builditem.FeatureBuildItem;

/** Whether Quarkus found a container runtime while it built the test's application, told to the test. */
final class ContainerRuntime {

    private static final String FOUND = "mysql-lock.test.container-runtime";

    private ContainerRuntime() {
    }

    /** Whether the last application built found one: Quarkus' Dev Services then start containers, not ours. */
    static boolean found() {
        return Boolean.getBoolean(FOUND);
    }

    /** A build step that tells it, through a system property: the test runs in another class loader than the build. */
    static Consumer<BuildChainBuilder> told() {
        return chain -> chain.addBuildStep(new BuildStep() {
            @Override
            public void execute(BuildContext context) {
                System.setProperty(FOUND,
                        String.valueOf(context.consume(DockerStatusBuildItem.class).isContainerRuntimeAvailable()));
                context.produce(new FeatureBuildItem("container-runtime-check"));
            }
        }).consumes(DockerStatusBuildItem.class).produces(FeatureBuildItem.class).build();
    }
}
