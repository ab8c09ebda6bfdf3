package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A NAMED lock's first fencing token, asked for once this instance's membership of its fleet could not be confirmed
 * for as long as a membership lasts: refused as lost (and the lock freed on the server), never issued. The fleet may
 * have moved to leases meanwhile, whose holder of the same name draws its tokens from the same row. Before, the token
 * was issued as long as the server still showed the named lock held.
 */
class FenceAfterLapseTest {

    static final Duration TTL = Duration.ofSeconds(1);
    static final Duration KEEPALIVE = Duration.ofMillis(300);

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void noFencingTokenOnceTheMembershipLapsed() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("fence-lapse").mode(Mode.NAMED).keepalive(KEEPALIVE)
                .ttl(TTL).start()) {
            String name = "fence-lapse:x";
            LockHandle held = instance.locks.acquire(name, Duration.ZERO);
            // Nothing renews the membership from now on, nor looks at it: it runs out by this process's clock, a
            // membership's life (the longer of the ttl and three keepalive intervals, here 1.1 s) after its last renewal.
            instance.locks.engine().periodicWork().shutdownNow();
            TimeUnit.MILLISECONDS.sleep(TTL.toMillis() * 2);

            assertThatThrownBy(held::fencingToken).isInstanceOf(LockLostException.class)
                    .satisfies(e -> assertThat(((LockLostException) e).reason())
                            .isEqualTo(LockLostException.Reason.MEMBERSHIP_LOST));
            assertThat(ServerState.holder(instance.locks.serverName(name))).as("freed on the server").isEmpty();
            held.release();
        }
    }
}
