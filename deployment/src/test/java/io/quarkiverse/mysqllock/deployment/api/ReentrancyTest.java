package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

class ReentrancyTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void theSameThreadNestsAndTheOutermostReleaseFreesTheLock() throws Exception {
        LockHandle outer = locks.acquire("reentrant:a", Duration.ZERO);
        long session = ServerState.holder("reentrant:a").orElseThrow();
        LockHandle inner = locks.acquire("reentrant:a", Duration.ZERO);
        assertThat(inner).isNotSameAs(outer);
        assertThat(ServerState.holder("reentrant:a")).contains(session);

        inner.release();
        assertThat(inner.isValid()).isFalse();
        assertThat(outer.isValid()).isTrue();
        assertThat(ServerState.holder("reentrant:a")).contains(session);
        assertThat(LockApp.otherThreadAcquires(locks, "reentrant:a")).isFalse();

        inner.release(); // a second release of the same hold does not release the outer one
        assertThat(ServerState.holder("reentrant:a")).contains(session);

        outer.release();
        assertThat(ServerState.holder("reentrant:a")).isEmpty();
        assertThat(LockApp.otherThreadAcquires(locks, "reentrant:a")).isTrue();
    }

    @Test
    void aThreadsLocksShareOneConnection() {
        try (LockHandle a = locks.acquire("reentrant:x", Duration.ZERO);
                LockHandle b = locks.acquire("reentrant:y", Duration.ZERO)) {
            assertThat(ServerState.holder("reentrant:x")).isEqualTo(ServerState.holder("reentrant:y"));
        }
        assertThat(ServerState.holder("reentrant:x")).isEmpty();
        assertThat(ServerState.holder("reentrant:y")).isEmpty();
    }

    @Test
    void twoThreadsOfOneJvmContendAsTwoProcessesDo() throws Exception {
        try (LockHandle held = locks.acquire("reentrant:b", Duration.ZERO)) {
            assertThat(LockApp.otherThreadAcquires(locks, "reentrant:b")).isFalse();
        }
    }

    @Test
    void aHandleReleasedByAnotherThreadFreesTheLock() throws Exception {
        LockHandle handle = locks.acquire("reentrant:c", Duration.ZERO);
        Background.run(handle::release).get();
        assertThat(handle.isValid()).isFalse();
        assertThat(ServerState.holder("reentrant:c")).isEmpty();
        // and the thread that acquired it can acquire it again
        try (LockHandle again = locks.acquire("reentrant:c", Duration.ZERO)) {
            assertThat(ServerState.holder("reentrant:c")).isPresent();
        }
    }

}
