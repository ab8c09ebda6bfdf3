package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * The server ends the session holding a lock, and another thread of the same instance, waiting for it, is granted it
 * at once, before any keepalive check: the first holder is told then, not later. Before, the new grant took the name's
 * place in the instance's table of held names and the first holder stayed "valid" until a check of its session; had
 * that session been ended under a statement meanwhile (a lapse), it would never have been told at all.
 */
class GrantedAgainHereTest {

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void aLockGrantedToAnotherSessionOfThisInstanceTellsItsFormerHolder() throws Exception {
        // no keepalive check during the test: only the second grant can tell
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("granted-again").mode(Mode.NAMED)
                .keepalive(Duration.ofSeconds(60)).start()) {
            String name = "granted-again:x";
            LockHandle first = instance.locks.acquire(name, Duration.ZERO);
            AtomicReference<LockLostException> told = new AtomicReference<>();
            first.onLost(told::set);
            CompletableFuture<Optional<LockHandle>> second = Background
                    .supply(() -> instance.locks.tryAcquire(name, Duration.ofSeconds(30)));
            Await.until("the second thread waiting on the server", Duration.ofSeconds(10),
                    () -> ServerState.waitingInGetLock() > 0);

            TestDatabase.shared().kill(ServerState.holder(instance.locks.serverName(name)).orElseThrow());
            LockHandle again = second.get(20, TimeUnit.SECONDS).orElseThrow();

            assertThat(first.isValid()).as("the first holder, once the name was granted again here").isFalse();
            Await.until("the first holder told", Duration.ofSeconds(10), () -> told.get() != null);
            assertThat(told.get().reason()).isEqualTo(LockLostException.Reason.NOT_HELD);
            assertThat(again.isValid()).isTrue();
            first.release();
            assertThat(again.isValid()).as("the first holder's release takes nothing from the second").isTrue();
            assertThat(ServerState.holder(instance.locks.serverName(name))).isPresent();
            again.release();
        }
    }
}
