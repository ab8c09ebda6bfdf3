package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Two lock managers on separate pools contend for one lock. The critical section is a deliberately unsafe
 * read-modify-write of a counter in two statements: without mutual exclusion, updates are lost.
 */
class TwoManagersTest {

    static final int THREADS_PER_MANAGER = 4;
    static final int ROUNDS = 40;

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void noTwoHoldersOverlapAndNoUpdateIsLost() throws Exception {
        TestDatabase.shared().execute("CREATE TABLE IF NOT EXISTS two_counter (id INT PRIMARY KEY, value INT NOT NULL)");
        TestDatabase.shared().execute("REPLACE INTO two_counter VALUES (1, 0)");
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(2 * THREADS_PER_MANAGER);
        try (StandaloneLocks other = new StandaloneLocks("second")) {
            List<CompletableFuture<Void>> runs = new ArrayList<>();
            for (int t = 0; t < 2 * THREADS_PER_MANAGER; t++) {
                LockManager manager = t % 2 == 0 ? locks : other.locks;
                runs.add(Background.run(() -> {
                    try (Connection connection = TestDatabase.shared().connect()) {
                        for (int i = 0; i < ROUNDS; i++) {
                            try (LockHandle handle = manager.acquire("two:counter", Duration.ofSeconds(30))) {
                                maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                                increment(connection);
                                inside.decrementAndGet();
                            }
                        }
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                }, threads));
            }
            CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get();
        } finally {
            threads.shutdown();
        }
        assertThat(maxInside.get()).isEqualTo(1);
        assertThat(ServerState.queryLong("SELECT value FROM two_counter WHERE id = 1"))
                .isEqualTo(2L * THREADS_PER_MANAGER * ROUNDS);
    }

    private static void increment(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            ResultSet rs = statement.executeQuery("SELECT value FROM two_counter WHERE id = 1");
            rs.next();
            int value = rs.getInt(1);
            Thread.yield(); // widen the window a lost update needs
            statement.executeUpdate("UPDATE two_counter SET value = " + (value + 1) + " WHERE id = 1");
        }
    }
}
