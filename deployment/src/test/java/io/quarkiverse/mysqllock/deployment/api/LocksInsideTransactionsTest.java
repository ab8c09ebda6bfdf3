package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Lock calls inside a {@code @Transactional} method leave the transaction's own connection alone: its writes before
 * and after the lock calls commit together. (A lock connection given back on the caller's thread used to end the
 * transaction's association with its connection, and its next write failed to enlist.)
 */
class LocksInsideTransactionsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Writer.class);

    @Inject
    Writer writer;

    @Test
    void writesBeforeAndAfterLockCallsCommitTogether() {
        ServerState.update("CREATE TABLE IF NOT EXISTS tx_inside (id VARCHAR(40) PRIMARY KEY)");
        writer.writeAroundLockCalls("tx-inside");
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM tx_inside")).isEqualTo(4);
    }

    @Singleton
    public static class Writer {

        @Inject
        AgroalDataSource dataSource;

        @Inject
        LockManager locks;

        @Transactional
        public void writeAroundLockCalls(String name) {
            insert(name + ":before");
            assertThat(locks.isLocked(name)).isFalse();
            insert(name + ":after-query");
            try (LockHandle handle = locks.acquire(name, Duration.ZERO)) {
                assertThat(handle.fencingToken()).isPositive();
            }
            insert(name + ":after-lock");
            locks.runOnce(name + ":once", () -> {
            });
            insert(name + ":after-run-once");
        }

        private void insert(String id) {
            try (Connection connection = dataSource.getConnection();
                    PreparedStatement insert = connection.prepareStatement("INSERT INTO tx_inside (id) VALUES (?)")) {
                insert.setString(1, id);
                insert.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException(id + ": " + e.getMessage(), e);
            }
        }
    }
}
