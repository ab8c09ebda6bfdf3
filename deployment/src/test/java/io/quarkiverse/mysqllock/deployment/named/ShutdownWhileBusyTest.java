package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Shutting down while a connection is still inside a statement (a long GET_LOCK wait) ends that connection under the
 * statement; the other locks held on it are reported to their holders with reason SHUTDOWN, like every other lock.
 */
class ShutdownWhileBusyTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @jakarta.inject.Inject
    LockManager locks;

    @Test
    void locksOnAConnectionBusyAtShutdownAreReportedToo() throws Exception {
        LockHandle blocker = locks.acquire("shutdown:wanted", Duration.ZERO);
        StandaloneLocks instance = StandaloneLocks.Settings.of("closing").mode(Mode.NAMED).sharedConnections(0).start();
        AtomicReference<LockLostException> lost = new AtomicReference<>();
        CompletableFuture<Void> waiter = Background.run(() -> {
            instance.locks.acquire("shutdown:held", Duration.ZERO).onLost(lost::set);
            // the same thread, the same connection: it now waits inside GET_LOCK
            try {
                instance.locks.acquire("shutdown:wanted", Duration.ofSeconds(20));
            } catch (RuntimeException expected) {
                // ended by the shutdown
            }
        });
        LockApp.await("the wait on the server", Duration.ofSeconds(15), () -> ServerState.waitingInGetLock() > 0);
        instance.close();
        LockApp.await("the held lock to be reported", Duration.ofSeconds(30), () -> lost.get() != null);
        assertThat(lost.get().reason()).isEqualTo(LockLostException.Reason.SHUTDOWN);
        waiter.get();
        blocker.release();
    }
}
