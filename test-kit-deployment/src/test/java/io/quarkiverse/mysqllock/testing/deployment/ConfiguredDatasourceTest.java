package io.quarkiverse.mysqllock.testing.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.Consumer;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.builder.BuildChainBuilder;
import io.quarkus.builder.BuildContext;
import io.quarkus.builder.BuildStep;
import io.quarkus.deployment.builditem.DevServicesResultBuildItem;
import io.quarkus.test.QuarkusUnitTest;

/** A datasource with its own URL gets no Dev Service of ours: the URL configured is the one used. */
class ConfiguredDatasourceTest {

    static final String SERVICES = "mysql-lock.test.embedded-services";
    static final String URL = TestDatabase.shared().jdbcUrl() + "?connectTimeout=4321";

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .overrideConfigKey("quarkus.datasource.db-kind", "mysql")
            .overrideConfigKey("quarkus.datasource.jdbc.url", URL)
            .overrideConfigKey("quarkus.datasource.username", TestDatabase.shared().user())
            .overrideConfigKey("quarkus.datasource.password", TestDatabase.shared().password())
            .addBuildChainCustomizer(embeddedServices());

    @ConfigProperty(name = "quarkus.datasource.jdbc.url")
    String url;

    @Test
    void theConfiguredUrlIsUsedAndNothingWasStarted() {
        assertThat(url).isEqualTo(URL);
        assertThat(Long.getLong(SERVICES)).as("embedded Dev Services produced").isZero();
    }

    static Consumer<BuildChainBuilder> embeddedServices() {
        return chain -> chain.addBuildStep(new BuildStep() {
            @Override
            public void execute(BuildContext context) {
                System.setProperty(SERVICES, String.valueOf(context.consumeMulti(DevServicesResultBuildItem.class).stream()
                        .filter(item -> EmbeddedDevServicesProcessor.FEATURE.equals(item.getName())).count()));
                context.produce(new io.quarkus.deployment.builditem.FeatureBuildItem("embedded-services-check"));
            }
        }).consumes(DevServicesResultBuildItem.class).produces(io.quarkus.deployment.builditem.FeatureBuildItem.class).build();
    }
}
