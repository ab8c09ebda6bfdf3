package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Optional;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

class AcquireReleaseTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void acquireHoldsTheLockOnTheServerUntilRelease() throws Exception {
        assertThat(locks.mode()).isEqualTo(LockMode.NAMED);
        LockHandle handle = locks.acquire("basic:one", Duration.ZERO);
        assertThat(handle.name()).isEqualTo("basic:one");
        assertThat(handle.isValid()).isTrue();
        assertThat(serverHolder("basic:one")).isPresent();
        assertThat(locks.isLocked("basic:one")).isTrue();

        handle.release();
        assertThat(handle.isValid()).isFalse();
        assertThat(serverHolder("basic:one")).isEmpty();
        assertThat(locks.isLocked("basic:one")).isFalse();
        handle.release(); // idempotent
        handle.close();
        assertThat(serverHolder("basic:one")).isEmpty();
    }

    @Test
    void anotherThreadFindsTheLockBusy() throws Exception {
        try (LockHandle held = locks.acquire("basic:busy", Duration.ZERO)) {
            Optional<LockHandle> other = Background.supply(() -> locks.tryAcquire("basic:busy")).get();
            assertThat(other).isEmpty();
            LockNotAcquiredException busy = Background
                    .supply(() -> catchNotAcquired(() -> locks.acquire("basic:busy", Duration.ofMillis(100)))).get();
            assertThat(busy.reason()).isEqualTo(LockNotAcquiredException.Reason.BUSY);
            assertThat(busy.lockName()).isEqualTo("basic:busy");
            assertThat(busy.holder()).get().asString().contains("thread '" + Thread.currentThread().getName() + "'");
            assertThat(busy.getMessage()).contains("basic:busy").contains("held by");
        }
        Optional<LockHandle> after = Background.supply(() -> locks.tryAcquire("basic:busy")).get();
        assertThat(after).isPresent();
        after.get().release();
    }

    @Test
    void inspectTellsWhoHoldsIt() throws Exception {
        assertThat(locks.inspect("basic:inspect")).isEmpty();
        try (LockHandle held = locks.acquire("basic:inspect", Duration.ZERO)) {
            LockInfo info = locks.inspect("basic:inspect").orElseThrow();
            assertThat(info.name()).isEqualTo("basic:inspect");
            assertThat(info.mode()).isEqualTo(LockMode.NAMED);
            assertThat(info.holder()).matches(".+/" + ProcessHandle.current().pid() + "/[0-9a-f]{8} \\(server connection "
                    + serverHolder("basic:inspect").orElseThrow() + ", thread '.+'\\)");
            assertThat(info.since()).isNotNull();
        }
        try (Connection other = TestDatabase.shared().connect();
                PreparedStatement statement = other.prepareStatement("SELECT GET_LOCK('basic:foreign', 0), CONNECTION_ID()")) {
            ResultSet rs = statement.executeQuery();
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(1);
            LockInfo info = locks.inspect("basic:foreign").orElseThrow();
            assertThat(info.holder()).isEqualTo("server connection " + rs.getLong(2));
            assertThat(locks.isLocked("basic:foreign")).isTrue();
        }
    }

    @Test
    void withLockRunsTheActionUnderTheLockAndReleases() {
        String result = locks.withLock("basic:with", Duration.ZERO, () -> {
            assertThat(serverHolder("basic:with")).isPresent();
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(serverHolder("basic:with")).isEmpty();

        IllegalStateException thrown = new IllegalStateException("boom");
        assertThatThrownBy(() -> locks.withLock("basic:with", Duration.ZERO, (Runnable) () -> {
            throw thrown;
        })).isSameAs(thrown);
        assertThat(serverHolder("basic:with")).isEmpty();

        assertThatThrownBy(() -> locks.withLock("basic:with", Duration.ZERO, () -> {
            throw new java.io.IOException("checked");
        })).isInstanceOf(java.util.concurrent.CompletionException.class).hasCauseInstanceOf(java.io.IOException.class);
        assertThat(serverHolder("basic:with")).isEmpty();
    }

    @Test
    void badInputFailsFastWithoutTouchingTheServer() {
        assertThatThrownBy(() -> locks.acquire(null, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
        assertThatThrownBy(() -> locks.acquire("  ", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank");
        assertThatThrownBy(() -> locks.tryAcquire("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.acquire("basic:bad", Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
        assertThatThrownBy(() -> locks.acquire("basic:bad", (Duration) null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
        assertThatThrownBy(() -> locks.acquireAsync(null, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.withLock("basic:bad", Duration.ZERO, (Runnable) null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.isLocked(null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(serverHolder("basic:bad")).isEmpty();
    }

    private static LockNotAcquiredException catchNotAcquired(Runnable action) {
        try {
            action.run();
        } catch (LockNotAcquiredException e) {
            return e;
        }
        throw new AssertionError("expected LockNotAcquiredException");
    }

    private static Optional<Long> serverHolder(String serverName) {
        return ServerState.holder(serverName);
    }
}
