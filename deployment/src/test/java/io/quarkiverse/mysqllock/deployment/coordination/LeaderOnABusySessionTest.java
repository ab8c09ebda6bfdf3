package io.quarkiverse.mysqllock.deployment.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A strict NAMED leader whose lock sits on the instance's one shared session, which other threads keep busy with
 * statements of their own: the leader stays leader. Each {@code GET_LOCK} on the session that finds it the same
 * server session confirms its locks; a keepalive check that finds it busy is no longer the only way. Before, the
 * keepalive skipped the busy session again and again, the term went unconfirmed for two intervals and ended (LOST).
 * <p>
 * A 1 s keepalive: with 200 ms, a term ended after 400 ms unconfirmed, which this test's own four busy threads on a
 * busy machine could cost it; the defect ends it after two intervals whatever their length.
 */
class LeaderOnABusySessionTest {

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void aStrictLeaderOnABusySharedSessionStaysLeader() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("busy-leader").mode(Mode.NAMED).table("busy_leader")
                .sharedConnections(1).keepalive(Duration.ofSeconds(1)).start()) {
            LeaderElection election = instance.locks.election("busy-session").join();
            Await.until("leading", Duration.ofSeconds(20), election::isLeader);
            long term = election.term().orElseThrow();

            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong statements = new AtomicLong();
            List<CompletableFuture<Void>> busy = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                busy.add(Background.run(() -> {
                    for (int i = 0; !stop.get(); i++) {
                        instance.locks.tryAcquire("busy-session:" + thread + ":" + (i % 50)).ifPresent(held -> {
                            statements.incrementAndGet();
                            held.release();
                        });
                    }
                }));
            }
            try {
                // five keepalive intervals of a session never idle: the defect ended the term after two
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (System.nanoTime() - until < 0) {
                    assertThat(election.isLeader()).as("leading while the session is busy").isTrue();
                    TimeUnit.MILLISECONDS.sleep(10);
                }
            } finally {
                stop.set(true);
                CompletableFuture.allOf(busy.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            }
            assertThat(statements.get()).as("the session was kept busy").isGreaterThan(100);
            assertThat(election.term().orElseThrow()).as("the same term throughout").isEqualTo(term);
            election.close();
        }
    }
}
