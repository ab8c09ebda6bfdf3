package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkus.runtime.StartupEvent;

/**
 * Start-up data written once across the cluster ({@code LockManager.runOnce}), when {@code lock-demo.run-once} names
 * it. Every instance calls it at start-up; instances that arrive while it runs wait for it.
 */
@Singleton
public class StartupData {

    private static final Logger LOG = Logger.getLogger(StartupData.class);

    @Inject
    LockManager locks;
    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "lock-demo.run-once")
    Optional<String> name;
    @ConfigProperty(name = "lock-demo.run-once-duration", defaultValue = "0ms")
    Duration duration;
    @ConfigProperty(name = "lock-demo.worker.instance", defaultValue = "instance")
    String instance;

    void seed(@Observes StartupEvent event) {
        name.ifPresent(once -> {
            boolean ran = locks.runOnce(once, () -> {
                LOG.infof("%s is writing the start-up data '%s'", instance, once);
                try (Connection connection = dataSource.getConnection();
                        PreparedStatement insert = connection
                                .prepareStatement("INSERT INTO run_once_history (name, instance) VALUES (?, ?)")) {
                    insert.setString(1, once);
                    insert.setString(2, instance);
                    insert.executeUpdate();
                    Thread.sleep(duration.toMillis());
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
            LOG.infof("%s: start-up data '%s' %s", instance, once, ran ? "written by this instance" : "already there");
        });
    }
}
