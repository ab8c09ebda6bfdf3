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
import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.test.GaleraCluster;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A Galera cluster whose third node's clock runs 3 s ahead (libfaketime): a lease ends at a time written by one
 * node's clock and is taken over when another node's clock passes it. Beyond {@code max-clock-skew}, the node ahead
 * grants a lease its holder still holds, and the holder's readiness says why; within it, the holder is told its lease
 * is lost before the node ahead can grant it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GaleraClockSkewTest {

    static final long AHEAD_SECONDS = 3;
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

    /** The measurement: skew beyond the bound (3 s against the default 200 ms) gives two holders at once. */
    @Test
    @Order(2)
    void beyondTheBoundTheNodeAheadGrantsALeaseItsHolderStillHoldsAndReadinessSaysWhy() throws Exception {
        // a 2 s ttl: the node 3 s ahead sees a lease just renewed on node 1 as ended
        try (StandaloneLocks behind = StandaloneLocks.Settings.of("behind").on(cluster.node(1).database())
                .ttl(Duration.ofSeconds(2)).start();
                StandaloneLocks ahead = StandaloneLocks.Settings.of("ahead").on(cluster.node(3).database())
                        .ttl(Duration.ofSeconds(2)).start()) {
            LockHandle held = behind.locks.acquire("skew:beyond", Duration.ZERO);
            Optional<LockHandle> taken = ahead.locks.tryAcquire("skew:beyond");
            assertThat(taken).as("the node ahead sees the lease as ended").isPresent();
            assertThat(held.isValid()).as("its holder still believes it holds it").isTrue();

            EngineHealth health = behind.locks.health();
            assertThat(health.isUp()).isFalse();
            assertThat(health.problem()).contains("clock runs ahead").contains("max-clock-skew=200ms");
            taken.get().release();
            held.release();
        }
    }

    /** Within the bound (max-clock-skew 4 s), the holder is told its lease is lost before the node ahead grants it. */
    @Test
    @Order(3)
    void withinTheBoundTheHolderIsToldBeforeTheNodeAheadGrantsItsLease() throws Exception {
        try (TcpProxy link = TcpProxy.start("behind", cluster.node(1).port());
                StandaloneLocks behind = StandaloneLocks.Settings.of("behind-safe")
                        .on(cluster.node(1).database().via(link)).ttl(Duration.ofSeconds(10))
                        .maxClockSkew(Duration.ofSeconds(4)).start();
                StandaloneLocks ahead = StandaloneLocks.Settings.of("ahead-safe").on(cluster.node(3).database())
                        .ttl(Duration.ofSeconds(10)).maxClockSkew(Duration.ofSeconds(4)).start()) {
            LockHandle held = behind.locks.acquire("skew:within", Duration.ZERO);
            CompletableFuture<Long> toldAt = new CompletableFuture<>();
            held.onLost(e -> toldAt.complete(System.nanoTime()));
            assertThat(ahead.locks.tryAcquire("skew:within")).as("renewed: not taken").isEmpty();

            link.stall(); // the holder can no longer renew
            try {
                LockHandle next = ahead.locks.acquire("skew:within", Duration.ofSeconds(20));
                long grantedAt = System.nanoTime();
                assertThat(toldAt).as("the holder was told before the node ahead granted its lease").isCompleted();
                assertThat(toldAt.get()).isLessThan(grantedAt);
                next.release();
            } finally {
                link.resume();
            }
        }
    }
}
