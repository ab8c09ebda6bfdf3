package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/** A server restart ends every session: every held lock is reported lost, and locking works again afterwards. */
class ServerRestartTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideRuntimeConfigKey("quarkus.mysql-lock.named.keepalive-interval", "500ms");

    @Inject
    LockManager locks;

    @Test
    void everyHeldLockIsReportedLostAndNewAcquisitionsWork() throws Exception {
        Assumptions.assumeTrue(TestDatabase.shared().isEmbedded(), "needs the embedded server to restart it");
        List<LockHandle> handles = new ArrayList<>();
        CountDownLatch lost = new CountDownLatch(4);
        for (int i = 0; i < 4; i++) {
            String name = "restart:" + i;
            // two on this thread's connection, two on connections of their own
            LockHandle handle = i < 2 ? locks.acquire(name, Duration.ZERO)
                    : Background.supply(() -> locks.acquire(name, Duration.ZERO)).get();
            handle.onLost(e -> lost.countDown());
            handles.add(handle);
        }

        TestDatabase.shared().restart();

        assertThat(lost.await(3, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(handles).noneMatch(LockHandle::isValid);
        for (LockHandle handle : handles) {
            handle.release();
        }
        // The pool still holds connections that died with the old server: they are replaced, not reported.
        for (int i = 0; i < 4; i++) {
            try (LockHandle again = locks.acquire("restart:" + i, Duration.ZERO)) {
                assertThat(again.isValid()).isTrue();
                assertThat(ServerState.holder("restart:" + i)).isPresent();
            }
        }
        assertThat(locks.isLocked("restart:0")).isFalse();
    }
}
