package io.quarkiverse.mysqllock.deployment.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.features.HandleReleases;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * The application keeps every other connection of the pool busy for longer than a membership lives: a held lock
 * survives on both engines, and is still held on the server and valid afterwards. The engines' housekeeping (the
 * fleet's membership, lease renewals) runs on a connection kept for it. Before, the membership was renewed on a
 * borrowed connection: it lapsed, and every NAMED lock was reported lost and freed while its holder still ran.
 */
class SaturatedPoolTest {

    /**
     * Long enough that the housekeeping survives a busy machine (with 300 ms and 1 s, a membership or a lease was lost
     * after a renewal about half a second late), short enough that the membership's life (the longer of the ttl and
     * three keepalive intervals, plus 200 ms: 4.2 s) fits in the saturation below.
     */
    static final Duration KEEPALIVE = Duration.ofSeconds(1);
    static final Duration TTL = Duration.ofSeconds(4);
    /**
     * Longer than the membership's life by half: a membership renewed on a borrowed connection, the defect, is never
     * renewed while the pool is saturated, and lapses within it.
     */
    static final long SATURATED_MILLIS = 6_500;

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void aNamedLockSurvivesASaturatedPool() throws Exception {
        survives(Mode.NAMED);
    }

    @Test
    void aLeaseSurvivesASaturatedPool() throws Exception {
        survives(Mode.LEASE);
    }

    private static void survives(Mode mode) throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("saturated-" + mode).mode(mode).keepalive(KEEPALIVE)
                .ttl(TTL).poolSize(4).start()) {
            String name = "saturated:" + mode;
            LockHandle held = instance.locks.acquire(name, Duration.ZERO);
            AtomicReference<LockLostException> lost = new AtomicReference<>();
            held.onLost(lost::set);

            List<Connection> application = new ArrayList<>();
            try {
                // every connection the pool still has, kept busy by the application
                while (true) {
                    try {
                        application.add(instance.dataSource.getConnection());
                    } catch (SQLException exhausted) {
                        break;
                    }
                }
                assertThat(application).as("the application holds what the pool had left").isNotEmpty();
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SATURATED_MILLIS);
                while (System.nanoTime() - until < 0) {
                    assertThat(lost.get()).as("a loss reported while the pool is saturated").isNull();
                    assertThat(held.isValid()).isTrue();
                    TimeUnit.MILLISECONDS.sleep(50);
                }
            } finally {
                for (Connection connection : application) {
                    connection.close();
                }
            }
            assertThat(lost.get()).isNull();
            assertThat(held.isValid()).isTrue();
            if (mode == Mode.NAMED) {
                assertThat(ServerState.holder(instance.locks.serverName(name))).as("still held on the server").isPresent();
            }
            // the release finds it still held: RELEASE_LOCK by its session, the give-up of its own lease
            assertThat(HandleReleases.releaseReportingLoss(held)).as("a loss found by the release").isNull();
        }
    }
}
