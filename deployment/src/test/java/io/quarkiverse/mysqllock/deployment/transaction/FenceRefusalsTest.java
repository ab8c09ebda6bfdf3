package io.quarkiverse.mysqllock.deployment.transaction;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkus.test.QuarkusUnitTest;

/** What {@code LockManager.fence} refuses, each with what to do instead (NAMED, without fenced commits). */
class FenceRefusalsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app().overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "named");

    @Inject
    LockManager locks;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void aConnectionInAutocommitModeIsRefused() throws Exception {
        try (LockHandle lock = locks.acquire("fence:autocommit", Duration.ZERO);
                Connection connection = dataSource.getConnection()) {
            assertThatThrownBy(() -> locks.fence(lock, connection)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("autocommit").hasMessageContaining("setAutoCommit(false)");
        }
    }

    @Test
    void theNamedEngineWithoutFencedCommitsIsRefused() throws Exception {
        try (LockHandle lock = locks.acquire("fence:named", Duration.ZERO);
                Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            assertThatThrownBy(() -> locks.fence(lock, connection)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("quarkus.mysql-lock.fenced-commit=true");
            connection.rollback();
        }
    }

    @Test
    void aReleasedLockIsRefused() throws Exception {
        LockHandle lock = locks.acquire("fence:released", Duration.ZERO);
        lock.release();
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            assertThatThrownBy(() -> locks.fence(lock, connection)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("released");
            connection.rollback();
        }
    }
}
