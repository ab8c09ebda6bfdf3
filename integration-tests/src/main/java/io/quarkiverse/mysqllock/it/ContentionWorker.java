package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * A job that several instances run at once, each round under the same lock: the demo's and the multi-process tests'
 * workload. Inside the lock it does a deliberately unsafe read-modify-write of a counter (lost without mutual
 * exclusion), counts how many holders are inside at once, and records each critical section with its fencing token.
 */
@Singleton
public class ContentionWorker {

    private static final Logger LOG = Logger.getLogger(ContentionWorker.class);

    @Inject
    LockManager locks;
    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "lock-demo.worker.enabled", defaultValue = "false")
    boolean enabled;
    @ConfigProperty(name = "lock-demo.worker.instance", defaultValue = "instance")
    String instance;
    @ConfigProperty(name = "lock-demo.worker.lock", defaultValue = "nightly-report")
    String lockName;
    @ConfigProperty(name = "lock-demo.worker.threads", defaultValue = "1")
    int threads;
    @ConfigProperty(name = "lock-demo.worker.rounds", defaultValue = "0")
    int rounds;
    @ConfigProperty(name = "lock-demo.worker.hold", defaultValue = "0ms")
    Duration hold;
    @ConfigProperty(name = "lock-demo.worker.pause", defaultValue = "0ms")
    Duration pause;
    @ConfigProperty(name = "lock-demo.worker.wait", defaultValue = "30s")
    Duration wait;

    private final List<Thread> running = new ArrayList<>();
    private volatile boolean stopping;

    void start(@Observes StartupEvent event) throws SQLException {
        if (!enabled) {
            return;
        }
        createTables();
        for (int t = 1; t <= threads; t++) {
            Thread thread = new Thread(this::work, instance + "-worker-" + t);
            running.add(thread);
            thread.start();
        }
        Thread exit = new Thread(() -> {
            for (Thread thread : running) {
                try {
                    thread.join();
                } catch (InterruptedException e) {
                    return;
                }
            }
            if (!stopping) {
                LOG.infof("%s finished its rounds", instance);
                Quarkus.asyncExit(0);
            }
        }, "worker-exit");
        exit.setDaemon(true);
        exit.start();
    }

    void stop(@Observes ShutdownEvent event) {
        stopping = true;
        running.forEach(Thread::interrupt);
    }

    private void createTables() throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS lock_counter (name VARCHAR(200) PRIMARY KEY,"
                    + " value INT NOT NULL DEFAULT 0, inside INT NOT NULL DEFAULT 0, max_inside INT NOT NULL DEFAULT 0)");
            statement.execute("CREATE TABLE IF NOT EXISTS lock_history (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
                    + " name VARCHAR(200) NOT NULL, instance VARCHAR(100) NOT NULL, fence BIGINT NOT NULL,"
                    + " started_at DATETIME(6) NOT NULL, ended_at DATETIME(6) NULL)");
            statement.execute("INSERT IGNORE INTO lock_counter (name) VALUES ('" + lockName.replace("'", "") + "')");
        }
    }

    private void work() {
        for (int round = 0; (rounds == 0 || round < rounds) && !stopping; round++) {
            try (LockHandle handle = locks.acquire(lockName, wait)) {
                criticalSection(handle);
            } catch (LockNotAcquiredException e) {
                LOG.infof("%s could not get '%s': %s", instance, lockName, e.getMessage());
                round--;
            } catch (LockLostException e) {
                LOG.warnf("%s lost '%s': %s", instance, lockName, e.getMessage());
            } catch (InterruptedException e) {
                return;
            } catch (SQLException e) {
                if (!stopping) {
                    LOG.errorf(e, "%s failed", instance);
                }
                return;
            }
            if (!pause.isZero()) {
                try {
                    Thread.sleep(pause.toMillis());
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private void criticalSection(LockHandle handle) throws SQLException, InterruptedException {
        handle.onLost(lost -> LOG.warnf("%s lost '%s': %s", instance, lockName, lost.getMessage()));
        long fence = handle.fencingToken();
        try (Connection connection = dataSource.getConnection()) {
            long id;
            try (PreparedStatement enter = connection.prepareStatement("INSERT INTO lock_history (name, instance, fence,"
                    + " started_at) VALUES (?, ?, ?, UTC_TIMESTAMP(6))", Statement.RETURN_GENERATED_KEYS)) {
                enter.setString(1, lockName);
                enter.setString(2, instance);
                enter.setLong(3, fence);
                enter.executeUpdate();
                ResultSet keys = enter.getGeneratedKeys();
                keys.next();
                id = keys.getLong(1);
            }
            update(connection, "UPDATE lock_counter SET inside = inside + 1, max_inside = GREATEST(max_inside, inside)"
                    + " WHERE name = ?");
            int value;
            try (PreparedStatement read = connection.prepareStatement("SELECT value FROM lock_counter WHERE name = ?")) {
                read.setString(1, lockName);
                ResultSet rs = read.executeQuery();
                rs.next();
                value = rs.getInt(1);
            }
            LOG.infof("%s holds '%s' (fencing token %d)", instance, lockName, fence);
            if (!hold.isZero()) {
                Thread.sleep(hold.toMillis());
            }
            try (PreparedStatement write = connection.prepareStatement("UPDATE lock_counter SET value = ? WHERE name = ?")) {
                write.setInt(1, value + 1);
                write.setString(2, lockName);
                write.executeUpdate();
            }
            update(connection, "UPDATE lock_counter SET inside = inside - 1 WHERE name = ?");
            try (PreparedStatement exit = connection
                    .prepareStatement("UPDATE lock_history SET ended_at = UTC_TIMESTAMP(6) WHERE id = ?")) {
                exit.setLong(1, id);
                exit.executeUpdate();
            }
        }
        LOG.infof("%s releases '%s'", instance, lockName);
    }

    private void update(Connection connection, String sql) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, lockName);
            statement.executeUpdate();
        }
    }
}
