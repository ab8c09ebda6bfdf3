package io.quarkiverse.mysqllock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;

/**
 * The scheduling benchmark's job ({@code bench.role=job}): every second ({@code bench.job.cron}, off unless set), run
 * by one instance per tick, as the guide writes a job: {@code @Scheduled} + {@code @Locked(onBusy = SKIP)} with a
 * {@code ScheduledExecution} parameter. Each run writes its tick and instance to {@code job_history}, as the
 * quarkus-quartz peer's job does.
 */
@ApplicationScoped
public class BenchJob {

    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "bench.instance.id", defaultValue = "1")
    String instance;

    @ConfigProperty(name = "bench.job.subject", defaultValue = "mysql-lock")
    String subject;

    @Scheduled(cron = "${bench.job.cron:off}", identity = "bench-tick")
    @Locked(value = "bench:tick", onBusy = OnBusy.SKIP)
    void tick(ScheduledExecution execution) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement insert = connection.prepareStatement("INSERT INTO job_history (subject, tick,"
                        + " instance) VALUES (?, ?, ?)")) {
            insert.setString(1, subject);
            insert.setLong(2, execution.getScheduledFireTime().getEpochSecond());
            insert.setString(3, instance);
            insert.executeUpdate();
        }
    }
}
