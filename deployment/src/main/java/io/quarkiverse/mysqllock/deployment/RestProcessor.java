package io.quarkiverse.mysqllock.deployment;

import jakarta.enterprise.inject.spi.DeploymentException;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.MySqlLockBuildTimeConfig;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.builditem.AdditionalIndexedClassesBuildItem;
import io.quarkus.resteasy.reactive.spi.ExceptionMapperBuildItem;

/** The opt-in REST mapping of {@code LockNotAcquiredException} ({@code quarkus.mysql-lock.rest.map-exceptions}). */
class RestProcessor {

    private static final Logger LOG = Logger.getLogger(RestProcessor.class);

    /** By name: its class implements a jakarta.ws.rs type, which an application without REST does not have. */
    static final String MAPPER = "io.quarkiverse.mysqllock.runtime.rest.LockNotAcquiredExceptionMapper";
    /** Below the default priority of an application's own mappers (Priorities.USER, 5000): theirs win. */
    static final int PRIORITY = 6000;

    @BuildStep
    void exceptionMapper(MySqlLockBuildTimeConfig config, Capabilities capabilities,
            BuildProducer<ExceptionMapperBuildItem> mappers) {
        // only with Quarkus REST: the mapper's types (jakarta.ws.rs) are optional dependencies of the runtime
        if (!config.rest().mapExceptions()) {
            return;
        }
        if (capabilities.isPresent(Capability.REST)) {
            mappers.produce(new ExceptionMapperBuildItem(MAPPER, LockNotAcquiredException.class.getName(), PRIORITY,
                    true));
        } else {
            LOG.warn("quarkus.mysql-lock.rest.map-exceptions=true does nothing: the application has no Quarkus REST"
                    + " (quarkus-rest). With RESTEasy Classic, map LockNotAcquiredException with an ExceptionMapper of"
                    + " your own");
        }
    }

    /** By name: it is a jakarta.ws.rs resource, which an application without REST does not have. */
    static final String ADMIN = "io.quarkiverse.mysqllock.runtime.rest.AdminResource";

    /**
     * The admin resource, where {@code quarkus.mysql-lock.admin.enabled=true}: it changes the fleet's state, so it is
     * served only where its role can be enforced (a security extension) and REST is there to serve it.
     */
    @BuildStep
    void adminResource(MySqlLockBuildTimeConfig config, Capabilities capabilities,
            BuildProducer<AdditionalIndexedClassesBuildItem> indexed) {
        if (!config.admin().enabled()) {
            return;
        }
        if (!capabilities.isPresent(Capability.REST)) {
            throw new DeploymentException("quarkus.mysql-lock.admin.enabled=true needs Quarkus REST (quarkus-rest) to"
                    + " serve the admin resource: add it, or leave the admin resource off");
        }
        if (!capabilities.isPresent(Capability.SECURITY)) {
            throw new DeploymentException("quarkus.mysql-lock.admin.enabled=true needs a security extension (such as"
                    + " quarkus-oidc, quarkus-smallrye-jwt or quarkus-elytron-security-properties-file): without one,"
                    + " the role quarkus.mysql-lock.admin.role is not enforced and anyone could pause jobs and release"
                    + " locks");
        }
        indexed.produce(new AdditionalIndexedClassesBuildItem(ADMIN));
    }
}
