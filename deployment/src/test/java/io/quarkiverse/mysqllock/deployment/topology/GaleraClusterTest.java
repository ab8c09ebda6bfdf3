package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.topology.Topology;
import io.quarkiverse.mysqllock.runtime.topology.TopologyProbe;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.GaleraCluster;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;
import io.quarkus.runtime.configuration.ConfigurationException;

/**
 * A real 3-node MariaDB Galera cluster (Debian's mariadb-server and galera-4, {@link GaleraCluster}), instances on
 * different nodes: AUTO chooses LEASE on every node and says why, NAMED is refused, and under contention from three
 * nodes at once the lease excludes, fences follow the order of acquisition, and certification conflicts never reach
 * the caller as errors.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GaleraClusterTest {

    static GaleraCluster cluster;

    @BeforeAll
    static void startCluster() {
        GaleraCluster.assumeAvailable("Galera cluster tests");
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
        cluster = GaleraCluster.start(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void autoChoosesLeaseOnEveryNodeAndSaysWhy() throws Exception {
        List<StandaloneLocks> instances = new ArrayList<>();
        try {
            for (GaleraCluster.Node node : cluster.nodes()) {
                instances.add(new StandaloneLocks(node.database(), "auto-" + node.number(), Mode.AUTO, Optional.empty()));
                try (Connection connection = node.database().connect()) {
                    Topology topology = TopologyProbe.probe(connection);
                    assertThat(topology.galera()).isTrue();
                    assertThat(topology.reason()).contains("Galera");
                }
            }
            assertThat(instances).allSatisfy(instance -> assertThat(instance.locks.mode()).isEqualTo(LockMode.LEASE));
        } finally {
            instances.forEach(StandaloneLocks::close);
        }
    }

    @Test
    @Order(2)
    void namedLocksAreRefusedOnAGaleraNode() {
        assertThatThrownBy(() -> new StandaloneLocks(cluster.node(2).database(), "named", Mode.NAMED, Optional.empty()))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("quarkus.mysql-lock.mode=named is refused")
                .hasMessageContaining("Galera");
    }

    /**
     * {@code quarkus.mysql-lock.replication=false} skips replication detection, never the facts that make named locks
     * impossible: on a Galera node AUTO still chooses LEASE. Before, it chose NAMED there, whose locks no other node
     * sees: two instances on two nodes held one name at once.
     */
    @Test
    @Order(2)
    void replicationFalseStillChoosesLeaseOnAGaleraNode() {
        try (StandaloneLocks one = StandaloneLocks.Settings.of("no-detection-1").on(cluster.node(1).database())
                .replication(false).start();
                StandaloneLocks two = StandaloneLocks.Settings.of("no-detection-2").on(cluster.node(2).database())
                        .replication(false).start()) {
            assertThat(one.locks.mode()).isEqualTo(LockMode.LEASE);
            try (LockHandle held = one.locks.acquire("galera:no-detection", Duration.ofSeconds(2))) {
                assertThat(two.locks.tryAcquire("galera:no-detection")).as("taken on another node meanwhile").isEmpty();
            }
        }
    }

    /** One critical section as the test saw it: the fence it was granted, in the order the sections began. */
    record Section(int instance, long fence) {
    }

    @Test
    @Order(3)
    void threeInstancesOnThreeNodesExcludeEachOtherAndFencesFollowTheOrderOfAcquisition() throws Exception {
        long conflictsBefore = certificationConflicts();
        List<StandaloneLocks> instances = new ArrayList<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger busy = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ConcurrentLinkedQueue<Section> sections = new ConcurrentLinkedQueue<>();
        Object order = new Object();
        List<CompletableFuture<Void>> threads = new ArrayList<>();
        try {
            for (GaleraCluster.Node node : cluster.nodes()) {
                instances.add(StandaloneLocks.Settings.of("hot-" + node.number()).on(node.database()).ttl(Duration.ofSeconds(5))
                        .start());
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            for (int i = 0; i < instances.size(); i++) {
                int instance = i;
                for (int t = 0; t < 8; t++) {
                    threads.add(Background.run(() -> {
                        while (System.nanoTime() < until && failure.get() == null) {
                            try (LockHandle handle = instances.get(instance).locks.acquire("galera:hot",
                                    Duration.ofSeconds(2))) {
                                synchronized (order) {
                                    if (inside.incrementAndGet() > 1) {
                                        overlaps.incrementAndGet();
                                    }
                                    sections.add(new Section(instance, handle.fencingToken()));
                                }
                                Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                                inside.decrementAndGet();
                            } catch (LockNotAcquiredException e) {
                                if (e.reason() != LockNotAcquiredException.Reason.BUSY) {
                                    failure.compareAndSet(null, e);
                                }
                                busy.incrementAndGet();
                            } catch (Throwable e) {
                                failure.compareAndSet(null, e);
                            }
                        }
                    }));
                }
            }
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        } finally {
            instances.forEach(StandaloneLocks::close);
        }
        long conflicts = certificationConflicts() - conflictsBefore;
        System.out.printf("galera contention: %d sections (%d, %d, %d by node), %d busy answers, %d certification"
                + " conflicts hidden from callers%n", sections.size(), count(sections, 0), count(sections, 1),
                count(sections, 2), busy.get(), conflicts);

        assertThat(failure.get()).isNull();
        assertThat(overlaps.get()).isZero();
        assertThat(sections.size()).isGreaterThan(100);
        // every node's instance got the lock: the contention really was between nodes
        assertThat(List.of(count(sections, 0), count(sections, 1), count(sections, 2))).allMatch(n -> n > 0);
        long previous = 0;
        for (Section section : sections) {
            assertThat(section.fence()).as("fences in the order of acquisition").isGreaterThan(previous);
            previous = section.fence();
        }
    }

    /**
     * A node applies other nodes' commits a moment after they were acknowledged: a read there that does not wait for
     * them (wsrep_sync_wait) sees the lock table as it was before. Reads that decide must not.
     */
    @Test
    @Order(4)
    void readsOnAnotherNodeSeeATakeAndAReleaseAtOnce() throws Exception {
        try (StandaloneLocks one = StandaloneLocks.Settings.of("reader-1").on(cluster.node(1).database()).start();
                StandaloneLocks two = StandaloneLocks.Settings.of("reader-2").on(cluster.node(2).database()).start()) {
            int stale = 0;
            for (int i = 0; i < 300; i++) {
                String name = "galera:seen:" + i;
                try (LockHandle handle = one.locks.acquire(name, Duration.ZERO)) {
                    if (!two.locks.isLocked(name) || two.locks.inspect(name).isEmpty()
                            || two.locks.holders().stream().noneMatch(h -> h.name().equals(name))) {
                        stale++;
                    }
                }
                if (two.locks.isLocked(name)) {
                    stale++;
                }
            }
            assertThat(stale).as("reads on node 2 that missed a take or a release on node 1").isZero();
        }
    }

    /**
     * A node cut off from the others becomes non-primary and refuses every statement (1047): its instance cannot renew
     * and must be told its lease is lost before the majority lets another instance take it.
     */
    @Test
    @Order(5)
    void anInstanceOnAPartitionedNodeIsToldBeforeTheMajorityGrantsItsLease() throws Exception {
        GaleraCluster.Node cutOff = cluster.node(3);
        try (StandaloneLocks minority = StandaloneLocks.Settings.of("minority").on(cutOff.database())
                .ttl(Duration.ofSeconds(3)).start();
                StandaloneLocks majority = StandaloneLocks.Settings.of("majority").on(cluster.node(1).database())
                        .ttl(Duration.ofSeconds(3)).start()) {
            LockHandle held = minority.locks.acquire("galera:partition", Duration.ZERO);
            try {
                takenOverOnceItsHolderWasTold(held, () -> {
                    cutOff.isolate();
                    assertThat(cutOff.clusterStatus()).isNotEqualTo("Primary");
                }, majority, "galera:partition");
            } finally {
                cutOff.heal();
            }
            cluster.awaitSize(3, Duration.ofSeconds(60));
            // healed: the node serves locks again
            try (LockHandle again = minority.locks.acquire("galera:partition", Duration.ofSeconds(10))) {
                assertThat(again.isValid()).isTrue();
            }
        }
    }

    /** A node killed and started again: its instance's lease is lost and taken over, then the node rejoins. */
    @Test
    @Order(6)
    void anInstanceOnAKilledNodeLosesItsLeaseAndTheRestartedNodeRejoins() throws Exception {
        GaleraCluster.Node victim = cluster.node(2);
        try (StandaloneLocks onVictim = StandaloneLocks.Settings.of("victim").on(victim.database())
                .ttl(Duration.ofSeconds(3)).start();
                StandaloneLocks survivor = StandaloneLocks.Settings.of("survivor").on(cluster.node(1).database())
                        .ttl(Duration.ofSeconds(3)).start()) {
            LockHandle held = onVictim.locks.acquire("galera:kill", Duration.ZERO);
            long nextFence = takenOverOnceItsHolderWasTold(held, victim::kill, survivor, "galera:kill");

            victim.restart();
            cluster.awaitSize(3, Duration.ofSeconds(60));
            try (LockHandle again = onVictim.locks.acquire("galera:kill", Duration.ofSeconds(10))) {
                assertThat(again.fencingToken()).isGreaterThan(nextFence);
            }
        }
    }

    /**
     * Injects a fault that keeps the holder from renewing, then takes the lock on another node: the holder must have
     * been told its lease is lost before the grant, and the new fence must be greater. Returns the new fence.
     */
    private static long takenOverOnceItsHolderWasTold(LockHandle held, Runnable fault, StandaloneLocks taker,
            String name) throws Exception {
        long heldFence = held.fencingToken();
        CompletableFuture<Long> toldAt = new CompletableFuture<>();
        held.onLost(e -> toldAt.complete(System.nanoTime()));
        fault.run();
        try (LockHandle next = taker.locks.acquire(name, Duration.ofSeconds(10))) {
            long grantedAt = System.nanoTime();
            assertThat(toldAt).isCompleted();
            assertThat(toldAt.get()).isLessThan(grantedAt);
            assertThat(held.isValid()).isFalse();
            assertThat(next.fencingToken()).isGreaterThan(heldFence);
            return next.fencingToken();
        }
    }

    private static long count(ConcurrentLinkedQueue<Section> sections, int instance) {
        return sections.stream().filter(s -> s.instance() == instance).count();
    }

    /** Transactions a node aborted because another node's commit conflicted with them, over every node. */
    private static long certificationConflicts() {
        long total = 0;
        for (GaleraCluster.Node node : cluster.nodes()) {
            total += node.database().queryLong("SHOW GLOBAL STATUS LIKE 'wsrep_local_cert_failures'")
                    + node.database().queryLong("SHOW GLOBAL STATUS LIKE 'wsrep_local_bf_aborts'");
        }
        return total;
    }
}
