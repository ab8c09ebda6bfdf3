package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.GaleraCluster;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A Galera cluster whose third node's clock runs 3 s ahead (libfaketime): a lease's {@code expires_at} is written by
 * one node's clock and read by another's. Observed expiry makes that harmless: the node ahead takes no lease its holder
 * renews, takes a stalled holder's lease only after watching it unrenewed for the whole lease (its holder told first),
 * and readiness stays up. Only a max-clock-skew below the real skew breaks it (the long-dead shortcut), and readiness
 * says so.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GaleraClockSkewTest {

    static final long AHEAD_SECONDS = 3;
    static final Duration TTL = Duration.ofSeconds(2);
    static GaleraCluster cluster;

    @BeforeAll
    static void startCluster() {
        GaleraCluster.assumeAvailable("Galera clock-skew tests");
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
        cluster = GaleraCluster.start(3, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(AHEAD_SECONDS));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void theNodeRunsAhead() {
        long node1 = cluster.node(1).database().queryLong("SELECT UNIX_TIMESTAMP(UTC_TIMESTAMP(6)) * 1000");
        long node3 = cluster.node(3).database().queryLong("SELECT UNIX_TIMESTAMP(UTC_TIMESTAMP(6)) * 1000");
        assertThat(node3 - node1).isBetween(TimeUnit.SECONDS.toMillis(AHEAD_SECONDS) - 500,
                TimeUnit.SECONDS.toMillis(AHEAD_SECONDS) + 500);
    }

    /** A 2 s ttl: by node 3's clock, a lease just renewed on node 1 ended a second ago, at every renewal. */
    @Test
    @Order(2)
    void theNodeAheadTakesNoLeaseItsHolderRenewsAndReadinessStaysUp() throws Exception {
        try (StandaloneLocks behind = lease("behind", cluster.node(1).database()).start();
                StandaloneLocks ahead = lease("ahead", cluster.node(3).database()).start()) {
            // a row written by the node ahead: node 1 sees it in its future
            ahead.locks.acquire("skew:written-ahead", Duration.ZERO).release();
            LockHandle held = behind.locks.acquire("skew:renewed", Duration.ZERO);
            // the row committed on node 1 reaches node 3 a moment later
            Await.until("the lease row on node 3", Duration.ofSeconds(10), () -> cluster.node(3).database()
                    .queryLong("SELECT COUNT(*) FROM mysql_lock WHERE name = 'skew:renewed'") == 1);
            assertThat(cluster.node(3).database().queryLong("SELECT expires_at < UTC_TIMESTAMP(6) FROM mysql_lock"
                    + " WHERE name = 'skew:renewed'")).as("ended, by the clock of the node ahead").isEqualTo(1);
            long until = System.nanoTime() + TTL.multipliedBy(3).toNanos();
            int tries = 0;
            while (System.nanoTime() - until < 0) {
                assertThat(ahead.locks.tryAcquire("skew:renewed")).as("a renewed lease, on the node ahead").isEmpty();
                tries++;
                TimeUnit.MILLISECONDS.sleep(50);
            }
            assertThat(tries).isGreaterThan(10);
            assertThat(held.isValid()).isTrue();
            EngineHealth health = behind.locks.health();
            assertThat(health.isUp()).as("%s", health.problem()).isTrue();
            held.release();
        }
    }

    /** The holder can no longer renew: it is told, then the node ahead takes the lease, within a lease and a margin. */
    @Test
    @Order(3)
    void aStalledHoldersLeaseIsTakenByTheNodeAheadOnlyAfterItsHolderWasTold() throws Exception {
        try (TcpProxy link = TcpProxy.start("behind", cluster.node(1).port());
                StandaloneLocks behind = lease("behind-stalled", cluster.node(1).database().via(link)).start();
                StandaloneLocks ahead = lease("ahead-taker", cluster.node(3).database()).start()) {
            LockHandle held = behind.locks.acquire("skew:stalled", Duration.ZERO);
            long fence = held.fencingToken();
            CompletableFuture<Long> toldAt = new CompletableFuture<>();
            held.onLost(e -> toldAt.complete(System.nanoTime()));
            assertThat(ahead.locks.tryAcquire("skew:stalled")).as("renewed: not taken").isEmpty();

            link.stall(); // the holder can no longer renew
            long stalledAt = System.nanoTime();
            try {
                LockHandle next = ahead.locks.acquire("skew:stalled", Duration.ofSeconds(20));
                long grantedAt = System.nanoTime();
                assertThat(toldAt).as("the holder was told before the node ahead granted its lease").isCompleted();
                assertThat(toldAt.get()).isLessThan(grantedAt);
                assertThat(next.fencingToken()).isGreaterThan(fence);
                // a lease (from the last renewal before the stall), its margin, a poll, and slack for a busy machine
                assertThat(Duration.ofNanos(grantedAt - stalledAt)).isLessThan(TTL.plusMillis(200 + 250 + 3000));
                next.release();
            } finally {
                link.resume();
            }
        }
    }

    /**
     * What the one clock assumption left means: with max-clock-skew (500 ms) below the real skew, a lease renewed on
     * node 1 looks long dead on node 3, which grants it while its holder still holds it; the holder's readiness says why.
     */
    @Test
    @Order(4)
    void aMaxClockSkewBelowTheRealSkewLetsTheNodeAheadGrantALiveLeaseAndReadinessSaysWhy() throws Exception {
        try (StandaloneLocks behind = lease("behind-trusting", cluster.node(1).database())
                .maxClockSkew(Duration.ofMillis(500)).start();
                StandaloneLocks ahead = lease("ahead-trusting", cluster.node(3).database())
                        .maxClockSkew(Duration.ofMillis(500)).start()) {
            ahead.locks.acquire("skew:trusting-written-ahead", Duration.ZERO).release();
            LockHandle held = behind.locks.acquire("skew:trusting", Duration.ZERO);
            Optional<LockHandle> taken = ahead.locks.tryAcquire("skew:trusting");
            assertThat(taken).as("the node ahead sees the lease as long dead").isPresent();
            assertThat(held.isValid()).as("its holder still believes it holds it").isTrue();

            EngineHealth health = behind.locks.health();
            assertThat(health.isUp()).isFalse();
            assertThat(health.problem()).contains("clock runs ahead").contains("max-clock-skew=500ms");
            taken.get().release();
            held.release();
        }
    }

    static StandaloneLocks.Settings lease(String id, TestDatabase node) {
        return StandaloneLocks.Settings.of(id).mode(Mode.LEASE).on(node).ttl(TTL);
    }
}
