package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

class FencingTokenTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void tokensStrictlyIncreaseAcrossHoldersInstancesAndRestarts() throws Exception {
        List<Long> tokens = new ArrayList<>();
        try (StandaloneLocks other = new StandaloneLocks("other")) {
            for (int i = 0; i < 6; i++) {
                LockManager manager = i % 2 == 0 ? locks : other.locks;
                tokens.add(Background.supply(() -> {
                    try (LockHandle handle = manager.acquire("fence:a", Duration.ofSeconds(5))) {
                        long token = handle.fencingToken();
                        assertThat(handle.fencingToken()).isEqualTo(token); // cached for the hold
                        return token;
                    }
                }).get());
            }
        }
        // An application restart: a brand-new manager continues from the stored fence.
        try (StandaloneLocks restarted = new StandaloneLocks("restarted");
                LockHandle handle = restarted.locks.acquire("fence:a", Duration.ZERO)) {
            tokens.add(handle.fencingToken());
        }
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).isGreaterThan(tokens.get(i - 1));
        }
        assertThat(ServerState.queryLong("SELECT fence FROM mysql_lock WHERE name = 'fence:a'"))
                .isEqualTo(tokens.get(tokens.size() - 1));
    }

    @Test
    void nestedHoldsShareTheToken() {
        try (LockHandle outer = locks.acquire("fence:nested", Duration.ZERO);
                LockHandle inner = locks.acquire("fence:nested", Duration.ZERO)) {
            assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        }
    }

    @Test
    void aHolderThatNeverAsksTouchesNoTable() {
        try (LockHandle handle = locks.acquire("fence:unasked", Duration.ZERO)) {
            assertThat(handle.isValid()).isTrue();
        }
        locks.acquire("fence:probe", Duration.ZERO).close(); // the table exists only if some test created it
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'mysql_lock'"
                + " AND TABLE_SCHEMA = DATABASE()") == 0
                || ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock WHERE name = 'fence:unasked'") == 0).isTrue();
    }

    @Test
    void aReleasedHandleHasNoToken() {
        LockHandle handle = locks.acquire("fence:released", Duration.ZERO);
        handle.release();
        assertThatThrownBy(handle::fencingToken).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("released");
    }
}
