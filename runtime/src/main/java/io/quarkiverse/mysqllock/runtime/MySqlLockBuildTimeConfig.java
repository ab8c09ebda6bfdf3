package io.quarkiverse.mysqllock.runtime;

import java.util.Optional;

import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;

/** Configuration fixed when the application is built. */
@ConfigMapping(prefix = "quarkus.mysql-lock")
@ConfigRoot(phase = ConfigPhase.BUILD_AND_RUN_TIME_FIXED)
public interface MySqlLockBuildTimeConfig {

    /**
     * The datasource that holds the locks: the name of a datasource configured with {@code quarkus.datasource."name".*}.
     * Unset: the default datasource. It must be a MySQL or MariaDB datasource; the build fails otherwise.
     */
    Optional<String> datasource();
}
