package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Lock connections never join the caller's JTA transaction: a rollback leaves the lock and its fence alone, and the
 * lock connection does not go back to the pool when the transaction ends.
 */
class TransactionTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Orders.class);

    @Inject
    Orders orders;

    @Inject
    LockManager locks;

    @BeforeAll
    static void createTable() {
        TestDatabase.shared().execute("CREATE TABLE IF NOT EXISTS tx_orders (id INT PRIMARY KEY)");
        TestDatabase.shared().execute("DELETE FROM tx_orders");
    }

    @Test
    void aRolledBackTransactionKeepsTheLockAndItsFence() {
        assertThatThrownBy(() -> orders.lockWriteAndFail(1)).isInstanceOf(IllegalStateException.class)
                .hasMessage("rollback please");
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM tx_orders WHERE id = 1")).isZero();

        LockHandle handle = orders.handle;
        assertThat(handle.isValid()).isTrue();
        long session = ServerState.holder("tx:order").orElseThrow();
        // The fence was written on the lock connection, outside the rolled-back transaction.
        assertThat(ServerState.queryLong("SELECT fence FROM mysql_lock WHERE name = 'tx:order'")).isEqualTo(orders.fence);
        // Still pinned: using the lock connection works, and no other borrower got that session.
        assertThat(handle.fencingToken()).isEqualTo(orders.fence);
        assertThat(ServerState.holder("tx:order")).contains(session);
        orders.releaseInTransaction(handle);
        assertThat(ServerState.holder("tx:order")).isEmpty();
    }

    @Test
    void aCommittedTransactionDoesNotReleaseTheLock() throws SQLException {
        LockHandle handle = orders.lockAndWrite(2);
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM tx_orders WHERE id = 2")).isEqualTo(1);
        assertThat(handle.isValid()).isTrue();
        assertThat(ServerState.holder("tx:commit")).isPresent();
        handle.release();
        assertThat(ServerState.holder("tx:commit")).isEmpty();
        assertThat(locks.isLocked("tx:commit")).isFalse();
    }

    @Singleton // no client proxy: the test reads the fields
    public static class Orders {
        @Inject
        LockManager locks;
        @Inject
        AgroalDataSource dataSource;

        LockHandle handle;
        long fence;

        @Transactional
        public void lockWriteAndFail(int id) throws SQLException {
            handle = locks.acquire("tx:order", Duration.ZERO);
            fence = handle.fencingToken();
            insert(id);
            throw new IllegalStateException("rollback please");
        }

        @Transactional
        public LockHandle lockAndWrite(int id) throws SQLException {
            LockHandle held = locks.acquire("tx:commit", Duration.ZERO);
            insert(id);
            return held;
        }

        @Transactional
        public void releaseInTransaction(LockHandle held) {
            held.release();
        }

        private void insert(int id) throws SQLException {
            try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
                statement.executeUpdate("INSERT INTO tx_orders VALUES (" + id + ")");
            }
        }
    }
}
