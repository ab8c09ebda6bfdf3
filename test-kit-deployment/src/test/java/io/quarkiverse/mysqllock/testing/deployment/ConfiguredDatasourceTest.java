package io.quarkiverse.mysqllock.testing.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/** A datasource with its own URL gets no Dev Service of ours: the URL configured is the one used. */
class ConfiguredDatasourceTest {

    static final String URL = TestDatabase.shared().jdbcUrl() + "?connectTimeout=4321";

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .overrideConfigKey("quarkus.datasource.db-kind", "mysql")
            .overrideConfigKey("quarkus.datasource.jdbc.url", URL)
            .overrideConfigKey("quarkus.datasource.username", TestDatabase.shared().user())
            .overrideConfigKey("quarkus.datasource.password", TestDatabase.shared().password())
            .withApplicationRoot(jar -> jar.addClass(ContainerRuntime.class))
            .addBuildChainCustomizer(ContainerRuntime.told());

    @ConfigProperty(name = "quarkus.datasource.jdbc.url")
    String url;

    @Test
    void theConfiguredUrlIsUsedAndNothingWasStarted() {
        assertThat(url).isEqualTo(URL);
        assertThat(ContainerRuntime.embeddedServices()).as("embedded Dev Services produced").isZero();
    }
}
