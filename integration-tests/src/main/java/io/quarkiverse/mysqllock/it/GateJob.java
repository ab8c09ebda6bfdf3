package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;

/**
 * A job whose runs last until the test lets them end: each run writes a row to {@code gate_history} as it starts (its
 * kind, from its trigger, and its instance), waits until {@code job_gate} is open, and writes when it ended. Its
 * schedule ({@code lock-demo.gate.cron}) is off unless set: the tests run it now, through the admin resource.
 */
@ApplicationScoped
public class GateJob {

    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "lock-demo.worker.instance", defaultValue = "instance")
    String instance;

    @Scheduled(cron = "${lock-demo.gate.cron:off}", identity = "gate")
    @Locked(value = "cron:gate", onBusy = OnBusy.SKIP)
    void run(ScheduledExecution execution) throws SQLException, InterruptedException {
        String trigger = execution.getTrigger() == null ? "" : execution.getTrigger().getId();
        long id;
        try (Connection connection = dataSource.getConnection();
                PreparedStatement insert = connection.prepareStatement("INSERT INTO gate_history (kind, instance,"
                        + " started_at) VALUES (?, ?, CURRENT_TIMESTAMP(6))", Statement.RETURN_GENERATED_KEYS)) {
            insert.setString(1, trigger.substring(0, Math.max(0, trigger.indexOf(':'))));
            insert.setString(2, instance);
            insert.executeUpdate();
            try (ResultSet keys = insert.getGeneratedKeys()) {
                keys.next();
                id = keys.getLong(1);
            }
        }
        while (!open()) {
            Thread.sleep(20);
        }
        try (Connection connection = dataSource.getConnection();
                PreparedStatement update = connection
                        .prepareStatement("UPDATE gate_history SET ended_at = CURRENT_TIMESTAMP(6) WHERE id = ?")) {
            update.setLong(1, id);
            update.executeUpdate();
        }
    }

    private boolean open() throws SQLException {
        try (Connection connection = dataSource.getConnection();
                Statement query = connection.createStatement();
                ResultSet open = query.executeQuery("SELECT COUNT(*) FROM job_gate WHERE open")) {
            return open.next() && open.getLong(1) > 0;
        }
    }
}
