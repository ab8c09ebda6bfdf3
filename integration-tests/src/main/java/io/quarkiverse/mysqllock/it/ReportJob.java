package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockSkipped;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkus.scheduler.FailedExecution;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;

/**
 * A cron job every instance schedules, run by one instance per tick: {@code @Scheduled} + {@code @Locked(onBusy =
 * SKIP)} with a {@code ScheduledExecution} parameter, so the tick is claimed in the lock table and an instance whose
 * trigger fires late (a loaded machine, clock skew, a pause) does not run it again. Disabled unless
 * {@code lock-demo.cron} is set.
 */
@ApplicationScoped
public class ReportJob {

    private static final Logger LOG = Logger.getLogger(ReportJob.class);

    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "lock-demo.worker.instance", defaultValue = "instance")
    String instance;

    private final AtomicInteger skipped = new AtomicInteger();

    @Scheduled(cron = "${lock-demo.cron:off}", identity = "report")
    @Locked(value = "cron:report", onBusy = OnBusy.SKIP)
    void run(ScheduledExecution execution) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement insert = connection
                        .prepareStatement("INSERT INTO cron_history (tick, instance) VALUES (?, ?)")) {
            insert.setLong(1, execution.getScheduledFireTime().getEpochSecond());
            insert.setString(2, instance);
            insert.executeUpdate();
        }
    }

    void onSkip(@Observes LockSkipped skip) {
        if (skip.lockName().equals("cron:report")) {
            LOG.debugf("%s skipped a tick of %s (%d so far)", instance, skip.method(), skipped.incrementAndGet());
        }
    }

    void onFailure(@Observes FailedExecution failed) {
        if (failed.getExecution().getTrigger().getId().equals("report")) {
            LOG.errorf(failed.getException(), "%s failed a tick of report", instance);
        }
    }

    int skipped() {
        return skipped.get();
    }
}
