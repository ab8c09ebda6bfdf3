package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * Whatever a NAMED holder is told it lost is freed on the server. A lock whose validity is asked while this instance's
 * membership of its fleet is unconfirmed is lost the way a lapse loses it: its session ends. Before, {@code isValid()}
 * marked it lost and left it held: if the membership was then confirmed, the keepalive kept the session alive and the
 * lock stayed held for ever by a holder told it had lost it. The engine's periodic work is stopped here, so that the
 * membership runs out unconfirmed and nothing but {@code isValid()} looks at it.
 */
class ToldLostMeansFreedTest {

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void aLockFoundUnconfirmedIsFreedOnTheServer() {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("unconfirmed").mode(Mode.NAMED)
                .keepalive(Duration.ofMillis(300)).ttl(Duration.ofSeconds(1)).start()) {
            String name = "unconfirmed:held";
            LockHandle held = instance.locks.acquire(name, Duration.ZERO);
            AtomicReference<LockLostException> lost = new AtomicReference<>();
            held.onLost(lost::set);
            assertThat(ServerState.holder(instance.locks.serverName(name))).isPresent();

            instance.locks.engine().periodicWork().shutdownNow();
            Await.until("the holder told of the loss", Duration.ofSeconds(10), () -> !held.isValid());

            assertThat(held.isValid()).isFalse();
            Await.until("the listener told", Duration.ofSeconds(10), () -> lost.get() != null);
            assertThat(lost.get().reason()).isEqualTo(LockLostException.Reason.MEMBERSHIP_LOST);
            assertThat(ServerState.holder(instance.locks.serverName(name))).as("freed on the server").isEmpty();
            held.release();
        }
    }
}
