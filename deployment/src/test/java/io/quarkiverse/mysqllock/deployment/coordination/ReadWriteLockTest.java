package io.quarkiverse.mysqllock.deployment.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.DistributedReadWriteLock;
import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/** Read-write locks: many readers or one writer across instances, writers not starved, writers fenced. */
class ReadWriteLockTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void theLocksCanBeTakenWithoutBlocking() {
        Duration deadline = Duration.ofSeconds(20);
        DistributedReadWriteLock catalog = locks.readWriteLock("rw:async");
        LockHandle first = catalog.acquireReadAsync(Duration.ZERO).await().atMost(deadline);
        LockHandle second = catalog.acquireReadAsync(Duration.ZERO).await().atMost(deadline);
        assertThat(first.isValid()).isTrue();
        assertThat(second.isValid()).isTrue();
        assertThatThrownBy(() -> catalog.acquireWriteAsync(Duration.ofMillis(200)).await().atMost(deadline))
                .isInstanceOf(LockNotAcquiredException.class);
        first.release();
        second.release();
        try (LockHandle writer = catalog.acquireWriteAsync(Duration.ZERO).await().atMost(deadline)) {
            assertThat(writer.isValid()).isTrue();
        }
        assertThatThrownBy(() -> catalog.acquireReadAsync(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void namedReadersShareAndWritersExclude() {
        readersShareAndWritersExclude(Mode.NAMED);
    }

    @Test
    void leaseReadersShareAndWritersExclude() {
        readersShareAndWritersExclude(Mode.LEASE);
    }

    private void readersShareAndWritersExclude(Mode mode) {
        try (StandaloneLocks a = instance("rw-" + mode + "-a", mode); StandaloneLocks b = instance("rw-" + mode + "-b", mode)) {
            String name = "rw:" + mode;
            DistributedReadWriteLock onA = a.locks.readWriteLock(name);
            DistributedReadWriteLock onB = b.locks.readWriteLock(name);
            LockHandle read1 = onA.acquireRead(Duration.ZERO);
            LockHandle read2 = onB.acquireRead(Duration.ZERO);
            LockHandle read3 = onA.acquireRead(Duration.ZERO);
            assertThat(onB.tryAcquireWrite(Duration.ofMillis(300))).as("readers inside").isEmpty();
            LockHandle read4 = onA.tryAcquireRead(Duration.ZERO).orElseThrow(
                    () -> new AssertionError("a failed writer left the gate closed"));
            read4.release();
            assertThatThrownBy(() -> onB.acquireWrite(Duration.ZERO)).isInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("readers still hold read permits");
            List.of(read1, read2, read3).forEach(LockHandle::release);

            LockHandle write = onB.acquireWrite(Duration.ZERO);
            assertThat(write.name()).isEqualTo(name);
            assertThat(write.parts()).hasSize(DistributedReadWriteLock.DEFAULT_MAX_READERS + 1).first()
                    .extracting(LockHandle::name)
                    .isEqualTo(name + "#rw-gate");
            long firstWriter = write.fencingToken();
            assertThat(onA.tryAcquireRead(Duration.ofMillis(300))).as("a writer inside").isEmpty();
            assertThat(onA.tryAcquireWrite(Duration.ZERO)).isEmpty();
            write.release();
            assertThat(write.isValid()).isFalse();
            try (LockHandle next = onA.acquireWrite(Duration.ZERO)) {
                assertThat(next.fencingToken()).as("writers' tokens increase").isGreaterThan(firstWriter);
            }
            assertThat(a.locks.held()).isEmpty();
            assertThat(b.locks.held()).isEmpty();
        }
    }

    @Test
    void namedWritersAreNotStarved() throws Exception {
        writersAreNotStarvedAndNeverMeetReaders(Mode.NAMED);
    }

    @Test
    void leaseWritersAreNotStarved() throws Exception {
        writersAreNotStarvedAndNeverMeetReaders(Mode.LEASE);
    }

    /**
     * Four readers of two instances read without pause, always overlapping (so that there is never a moment without a
     * reader); a writer of each instance still gets in, three times each, and never together with a reader.
     */
    private void writersAreNotStarvedAndNeverMeetReaders(Mode mode) throws Exception {
        try (StandaloneLocks a = instance("rws-" + mode + "-a", mode);
                StandaloneLocks b = instance("rws-" + mode + "-b", mode)) {
            String name = "rws:" + mode;
            AtomicInteger readers = new AtomicInteger();
            AtomicInteger writers = new AtomicInteger();
            AtomicInteger violations = new AtomicInteger();
            AtomicInteger reads = new AtomicInteger();
            AtomicBoolean stop = new AtomicBoolean();
            List<CompletableFuture<Void>> readerThreads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                DistributedReadWriteLock lock = (t % 2 == 0 ? a : b).locks.readWriteLock(name);
                readerThreads.add(Background.run(() -> {
                    while (!stop.get()) {
                        lock.tryAcquireRead(Duration.ofSeconds(1)).ifPresent(read -> {
                            try (read) {
                                readers.incrementAndGet();
                                if (writers.get() > 0) {
                                    violations.incrementAndGet();
                                }
                                reads.incrementAndGet();
                                pauseMillis(20);
                                readers.decrementAndGet();
                            }
                        });
                    }
                }));
            }
            LockApp.await("readers to read", Duration.ofSeconds(10), () -> reads.get() > 8);
            List<Long> waits = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    DistributedReadWriteLock lock = (i % 2 == 0 ? a : b).locks.readWriteLock(name);
                    long start = System.nanoTime();
                    try (LockHandle write = lock.acquireWrite(Duration.ofSeconds(20))) {
                        waits.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                        writers.incrementAndGet();
                        if (readers.get() > 0) {
                            violations.incrementAndGet();
                        }
                        pauseMillis(20);
                        writers.decrementAndGet();
                    }
                }
            } finally {
                stop.set(true);
                CompletableFuture.allOf(readerThreads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            }
            assertThat(waits).hasSize(6);
            assertThat(violations.get()).isZero();
            System.out.printf("%s read-write: 6 writes among %d reads, writers waited %s ms%n", mode, reads.get(), waits);
        }
    }

    /**
     * More than 16 readers: the count is raised deliberately and stored for the fleet, so a writer on any instance
     * takes every read permit any reader can hold; it can only go up (lowered, a writer would take fewer permits than a
     * reader inside may hold).
     */
    @Test
    void theReaderCountIsRaisedForTheWholeFleet() {
        for (Mode mode : new Mode[] { Mode.NAMED, Mode.LEASE }) {
            try (StandaloneLocks a = instance("rw-readers-" + mode + "-a", mode);
                    StandaloneLocks b = instance("rw-readers-" + mode + "-b", mode)) {
                String name = "rw-readers:" + mode;
                DistributedReadWriteLock onA = a.locks.readWriteLock(name);
                DistributedReadWriteLock onB = b.locks.readWriteLock(name);
                assertThat(onA.maxReaders()).isEqualTo(DistributedReadWriteLock.DEFAULT_MAX_READERS);
                onB.raiseMaxReaders(20);
                assertThat(onA.maxReaders()).isEqualTo(20);
                List<LockHandle> readers = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    readers.add(onB.acquireRead(Duration.ZERO)); // a permit each: read permits never nest
                }
                assertThat(onA.tryAcquireRead(Duration.ZERO)).as("a 21st reader").isEmpty();
                for (int i = 0; i < 19; i++) {
                    readers.remove(0).release();
                }
                // one reader left, on a permit above the 16 of former days, maybe: a writer on A still waits for it
                assertThat(onA.tryAcquireWrite(Duration.ofMillis(300))).as("a writer beside a reader").isEmpty();
                readers.remove(0).release();
                try (LockHandle write = onA.acquireWrite(Duration.ofSeconds(10))) {
                    assertThat(write.parts()).hasSize(21);
                }
                assertThatThrownBy(() -> onA.raiseMaxReaders(16)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("cannot be lowered");
                assertThatThrownBy(() -> onA.raiseMaxReaders(DistributedSemaphore.MAX_PERMITS + 1))
                        .isInstanceOf(IllegalArgumentException.class);
                assertThat(onB.maxReaders()).isEqualTo(20);
                // a semaphore whose name is the read permits' has a number of its own: it cannot lower the readers
                b.locks.semaphore(name + "#rw-read", 1).changePermits(1);
                assertThat(onA.maxReaders()).isEqualTo(20);
            }
        }
    }

    /**
     * A reader's gate is lost (its server session killed) while it waits for a read permit, and a writer takes the gate:
     * the reader, granted its permit afterwards, finds the gate lost and does not get in beside the writer (it read the
     * number of readers before the writer did, but a reader that lost its gate might have read it after, and a raised
     * number would then give it a permit the writer never takes). Before, it returned a read hold while the writer kept
     * the gate.
     */
    @Test
    void aReaderWhoseGateWasLostDoesNotGetInOnceAWriterTookTheGate() throws Exception {
        try (StandaloneLocks a = instance("rw-gate-lost-a", Mode.NAMED);
                StandaloneLocks b = instance("rw-gate-lost-b", Mode.NAMED);
                StandaloneLocks c = instance("rw-gate-lost-c", Mode.NAMED)) {
            String name = "rw-gate-lost:x";
            DistributedReadWriteLock onB = b.locks.readWriteLock(name);
            List<LockHandle> inside = new ArrayList<>();
            for (int i = 0; i < onB.maxReaders(); i++) {
                inside.add(onB.acquireRead(Duration.ZERO));
            }
            long waitingBefore = ServerState.waitingInGetLock();
            CompletableFuture<java.util.Optional<LockHandle>> reader = Background
                    .supply(() -> a.locks.readWriteLock(name).tryAcquireRead(Duration.ofSeconds(6)));
            LockApp.await("the reader to wait for a read permit", Duration.ofSeconds(20),
                    () -> ServerState.waitingInGetLock() > waitingBefore);
            long gateSession = ServerState.holder(name + "#rw-gate").orElseThrow();
            ServerState.update("KILL " + gateSession);
            CompletableFuture<LockHandle> writer = Background
                    .supply(() -> c.locks.readWriteLock(name).acquireWrite(Duration.ofSeconds(30)));
            LockApp.await("the writer to take the gate", Duration.ofSeconds(20), () -> ServerState
                    .holder(name + "#rw-gate").filter(session -> session != gateSession).isPresent());
            // the writer waits for the read permits in name order, from #permit-0: #permit-9 comes last, and is free for
            // the reader first
            LockHandle last = inside.stream().filter(read -> read.name().endsWith("#permit-9")).findFirst().orElseThrow();
            inside.remove(last);
            last.release();
            assertThat(reader.get(30, TimeUnit.SECONDS)).as("a read hold beside the writer").isEmpty();

            inside.forEach(LockHandle::release);
            LockHandle write = writer.get(30, TimeUnit.SECONDS);
            assertThat(write.isValid()).isTrue();
            write.release();
        }
    }

    @Test
    void badArgumentsAreRefusedAndHoldNothing() {
        assertThatThrownBy(() -> locks.readWriteLock(null)).isInstanceOf(IllegalArgumentException.class);
        DistributedReadWriteLock lock = locks.readWriteLock("rw:bad");
        assertThatThrownBy(() -> lock.acquireRead(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.acquireWrite(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(locks.held()).extracting(LockInfo::name).noneMatch(held -> held.startsWith("rw:bad"));
    }

    /** The time a reader or writer spends inside: work, not synchronisation. */
    private static void pauseMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static StandaloneLocks instance(String id, Mode mode) {
        return StandaloneLocks.Settings.of(id).mode(mode).table("coordination_" + mode.name().toLowerCase()).start();
    }
}
