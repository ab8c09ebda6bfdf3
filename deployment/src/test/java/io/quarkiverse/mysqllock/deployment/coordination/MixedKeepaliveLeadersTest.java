package io.quarkiverse.mysqllock.deployment.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A fleet in the middle of a rolling change of {@code named.keepalive-interval}: the leader runs with 3 s, its
 * successor with 300 ms (or of {@code named.instant-leader-hand-over}). The server ends the leader's session: the leader stops
 * saying it leads only once its own
 * keepalive finds out (up to 3 s), so the successor's term begins only after the fleet's largest leader window (two
 * intervals of the slowest live instance, recorded in its membership), never after its own 600 ms alone. Before, the
 * two said they led at once for seconds.
 */
class MixedKeepaliveLeadersTest {

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void aSuccessorWaitsForTheSlowestLeaderWindowOfTheFleet() throws Exception {
        try (StandaloneLocks slow = StandaloneLocks.Settings.of("slow-keepalive").mode(Mode.NAMED)
                .keepalive(Duration.ofSeconds(3)).start();
                StandaloneLocks fast = StandaloneLocks.Settings.of("fast-keepalive").mode(Mode.NAMED)
                        .keepalive(Duration.ofMillis(300)).start()) {
            long waited = handOver(slow, fast, "rolling-change");
            assertThat(waited).as("the successor waited for the slow instance's window, two of its 3 s intervals")
                    .isGreaterThanOrEqualTo(6_000);
        }
    }

    /**
     * A rolling change to {@code named.instant-leader-hand-over}: the successor already has it, the leader not yet. The
     * instant hand-over holds only once every live instance has it; until then the successor waits for the leader's
     * window. Before, it began its term at its grant while the former leader still said it led.
     */
    @Test
    void instantHandOverWaitsUntilTheWholeFleetHasIt() throws Exception {
        try (StandaloneLocks strict = StandaloneLocks.Settings.of("strict-leader").mode(Mode.NAMED)
                .keepalive(Duration.ofSeconds(2)).start();
                StandaloneLocks instant = StandaloneLocks.Settings.of("instant-successor").mode(Mode.NAMED)
                        .keepalive(Duration.ofMillis(300)).instantLeaderHandOver(true).start()) {
            long waited = handOver(strict, instant, "rolling-instant");
            assertThat(waited).as("the successor waited for the strict instance's window, two of its 2 s intervals")
                    .isGreaterThanOrEqualTo(4_000);
        }
    }

    /**
     * The leader's session is ended by the server while the successor waits for the role: the two never say they lead
     * at once. How long after the end of the session the successor began, in milliseconds.
     */
    private static long handOver(StandaloneLocks leader, StandaloneLocks next, String role) throws Exception {
        LeaderElection former = leader.locks.election(role).join();
        Await.until("the first instance leading", Duration.ofSeconds(30), former::isLeader);
        LeaderElection successor = next.locks.election(role).join();

        TestDatabase.shared().kill(ServerState.holder(leader.locks.serverName(role + "#leader")).orElseThrow());
        long killed = System.nanoTime();
        long successorLedAt = 0;
        long bothLed = 0;
        // sampled until the successor has led for 4 s: the former's own keepalive (at most 3 s) has found out by then
        while (System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(30)
                && (successorLedAt == 0 || System.nanoTime() - successorLedAt < TimeUnit.SECONDS.toNanos(4))) {
            boolean successorLeads = successor.isLeader();
            if (successorLeads && former.isLeader()) {
                bothLed++;
            }
            if (successorLeads && successorLedAt == 0) {
                successorLedAt = System.nanoTime();
            }
            TimeUnit.MILLISECONDS.sleep(5);
        }
        assertThat(successorLedAt).as("the successor leads in the end").isNotZero();
        assertThat(bothLed).as("samples in which both said they led").isZero();
        assertThat(former.isLeader()).isFalse();
        former.close();
        successor.close();
        return TimeUnit.NANOSECONDS.toMillis(successorLedAt - killed);
    }
}
