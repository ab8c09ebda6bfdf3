package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;

/**
 * A cron job whose runs last longer than its period ({@code lock-demo.backlog.run-millis}), so that ticks fire while a
 * run lasts: with {@code overlap=queue-one}, each is queued and one run follows. Each run writes its tick, kind,
 * instance, start and end to {@code backlog_history}. Disabled unless {@code lock-demo.backlog.cron} is set.
 */
@ApplicationScoped
public class BacklogJob {

    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "lock-demo.worker.instance", defaultValue = "instance")
    String instance;

    /** How long a run lasts: the job's own work, longer than the period between its ticks. */
    @ConfigProperty(name = "lock-demo.backlog.run-millis", defaultValue = "0")
    long runMillis;

    @Scheduled(cron = "${lock-demo.backlog.cron:off}", identity = "backlog")
    @Locked(value = "cron:backlog", onBusy = OnBusy.SKIP)
    void run(ScheduledExecution execution) throws SQLException, InterruptedException {
        Instant started = Instant.now();
        Thread.sleep(runMillis);
        String trigger = execution.getTrigger() == null ? "" : execution.getTrigger().getId();
        try (Connection connection = dataSource.getConnection();
                PreparedStatement insert = connection.prepareStatement("INSERT INTO backlog_history"
                        + " (tick, kind, instance, started_at, ended_at) VALUES (?, ?, ?, ?, ?)")) {
            insert.setLong(1, execution.getScheduledFireTime().getEpochSecond());
            insert.setString(2, trigger.startsWith("queued:") ? "QUEUED" : "SCHEDULED");
            insert.setString(3, instance);
            insert.setTimestamp(4, Timestamp.from(started));
            insert.setTimestamp(5, Timestamp.from(Instant.now()));
            insert.executeUpdate();
        }
    }
}
