package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.shedlock.MySqlLockProvider;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.StartupEvent;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;

/**
 * ShedLock's own check of a provider, across processes: with {@code lock-demo.shedlock.increments} set, threads
 * increment one counter through ShedLock's {@link LockingTaskExecutor} over {@link MySqlLockProvider}, each increment a
 * deliberately unsafe read, pause and write that loses updates without mutual exclusion; a task ShedLock skips (the
 * lock is busy) is tried again. The instance exits when its threads made their increments.
 */
@Singleton
public class ShedLockCounter {

    private static final Logger LOG = Logger.getLogger(ShedLockCounter.class);
    static final String COUNTER = "shed:counter";

    @Inject
    LockManager locks;
    @Inject
    AgroalDataSource dataSource;

    @ConfigProperty(name = "lock-demo.shedlock.increments")
    Optional<Integer> increments;
    @ConfigProperty(name = "lock-demo.shedlock.threads", defaultValue = "4")
    int threads;
    @ConfigProperty(name = "lock-demo.worker.instance", defaultValue = "instance")
    String instance;

    void start(@Observes StartupEvent event) throws SQLException {
        if (increments.isEmpty()) {
            return;
        }
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS shedlock_counter (name VARCHAR(100) PRIMARY KEY,"
                    + " value INT NOT NULL)");
            statement.execute("INSERT IGNORE INTO shedlock_counter VALUES ('" + COUNTER + "', 0)");
        }
        MySqlLockProvider provider = new MySqlLockProvider(locks);
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        AtomicInteger skipped = new AtomicInteger();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                for (int done = 0; done < increments.get();) {
                    try {
                        boolean ran = executor.executeWithLock(this::increment, new LockConfiguration(Instant.now(),
                                COUNTER, Duration.ofSeconds(30), Duration.ZERO)).wasExecuted();
                        if (ran) {
                            done++;
                        } else {
                            skipped.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        LOG.errorf(e, "%s: an increment failed", instance);
                        return;
                    }
                }
            }, instance + "-shedlock-" + t);
            workers.add(worker);
            worker.start();
        }
        Thread exit = new Thread(() -> {
            for (Thread worker : workers) {
                try {
                    worker.join();
                } catch (InterruptedException e) {
                    return;
                }
            }
            provider.close();
            LOG.infof("%s made %d increments through ShedLock (%d tasks skipped while the lock was busy)", instance,
                    threads * increments.get(), skipped.get());
            Quarkus.asyncExit(0);
        }, "shedlock-counter-exit");
        exit.setDaemon(true);
        exit.start();
    }

    /** Read, pause, write: an update is lost whenever two of these overlap. */
    private Integer increment() throws SQLException, InterruptedException {
        try (Connection connection = dataSource.getConnection()) {
            int value;
            try (PreparedStatement read = connection.prepareStatement("SELECT value FROM shedlock_counter WHERE name = ?")) {
                read.setString(1, COUNTER);
                try (ResultSet rs = read.executeQuery()) {
                    rs.next();
                    value = rs.getInt(1);
                }
            }
            Thread.sleep(1);
            try (PreparedStatement write = connection
                    .prepareStatement("UPDATE shedlock_counter SET value = ? WHERE name = ?")) {
                write.setInt(1, value + 1);
                write.setString(2, COUNTER);
                write.executeUpdate();
            }
            return value + 1;
        }
    }
}
