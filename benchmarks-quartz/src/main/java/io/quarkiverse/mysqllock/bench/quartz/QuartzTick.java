package io.quarkiverse.mysqllock.bench.quartz;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.agroal.api.AgroalDataSource;
import io.quarkus.quartz.Nonconcurrent;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;

/**
 * The job every second ({@code bench.job.cron}, off unless set), run by one instance of the Quartz cluster per tick
 * and never two at a time ({@code @Nonconcurrent}, as Quartz's guide says for a job that must not overlap): each run
 * writes its tick and instance to {@code job_history}, as the mysql-lock subject's job does.
 */
@ApplicationScoped
public class QuartzTick {

    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "bench.instance.id", defaultValue = "1")
    String instance;

    @Scheduled(cron = "${bench.job.cron:off}", identity = "bench-tick")
    @Nonconcurrent
    void tick(ScheduledExecution execution) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement insert = connection.prepareStatement("INSERT INTO job_history (subject, tick,"
                        + " instance) VALUES ('quarkus-quartz', ?, ?)")) {
            insert.setLong(1, execution.getScheduledFireTime().getEpochSecond());
            insert.setString(2, instance);
            insert.executeUpdate();
        }
    }
}
