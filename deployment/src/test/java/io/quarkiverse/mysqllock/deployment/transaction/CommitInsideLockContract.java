package io.quarkiverse.mysqllock.deployment.transaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockEvent;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.smallrye.mutiny.Uni;

/**
 * A lock released while a JTA transaction is open is released once the transaction has ended: the commit lands under
 * the lock. Each test writes a value in a transaction under a lock while a second caller waits for the lock and reads
 * the value as soon as it is granted; the writer's transaction, about to commit, waits for that read if its lock was
 * already released (the trap this closes: the reader then saw the value before the commit). Run on each engine by the
 * classes that extend it.
 */
abstract class CommitInsideLockContract {

    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final AtomicInteger VALUES = new AtomicInteger(1000);

    @BeforeAll
    static void createTable() {
        TestDatabase.shared().execute("CREATE TABLE IF NOT EXISTS tx_commit_inside (name VARCHAR(100) PRIMARY KEY, v INT)");
    }

    @Inject
    LockManager locks;

    @Inject
    Ledger ledger;

    @Test
    void transactionalThenLockedCommitsBeforeTheNextHolderReads() throws Exception {
        assertTheNextHolderReadsTheCommit("tx-inside:tl", ledger::transactionalLocked);
    }

    @Test
    void lockedThenTransactionalCommitsBeforeTheNextHolderReads() throws Exception {
        assertTheNextHolderReadsTheCommit("tx-inside:lt", ledger::lockedTransactional);
    }

    @Test
    void aLockedMethodCalledFromATransactionalOneCommitsBeforeTheNextHolderReads() throws Exception {
        assertTheNextHolderReadsTheCommit("tx-inside:called", ledger::callsLocked);
    }

    @Test
    void withLockInsideATransactionCommitsBeforeTheNextHolderReads() throws Exception {
        assertTheNextHolderReadsTheCommit("tx-inside:with", ledger::withLockInside);
    }

    @Test
    void aHandleClosedInsideATransactionCommitsBeforeTheNextHolderReads() throws Exception {
        assertTheNextHolderReadsTheCommit("tx-inside:handle", ledger::handleInside);
        assertThat(Ledger.validAfterClose.get("tx-inside:handle")).as("the handle, once closed").isFalse();
    }

    @Test
    void aRollbackReleasesTheLockToo() throws Exception {
        String name = "tx-inside:rollback";
        assertThatThrownBy(() -> ledger.failsAfterWriting(name, 7)).hasMessage("roll back");
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM tx_commit_inside WHERE name = ?", name)).isZero();
        assertThat(LockApp.otherThreadAcquires(locks, name)).as("free once the transaction rolled back").isTrue();
    }

    /** A lock released in a transaction is still the thread's own until the end: the same lock again nests. */
    @Test
    void aLockTakenAgainInTheSameTransactionNestsRatherThanWaitingForItself() throws Exception {
        String name = "tx-inside:twice";
        assertThat(ledger.twice(name)).isEqualTo(2);
        assertThat(LockApp.otherThreadAcquires(locks, name)).as("free once the transaction committed").isTrue();
    }

    /** The gate a reader passes is given back at once: a second read in the same transaction does not wait for it. */
    @Test
    void twoReadLocksInOneTransactionBothRun() throws Exception {
        String name = "tx-inside:reads";
        assertThat(ledger.readTwice(name)).isEqualTo(2);
        assertThat(Background.supply(() -> {
            try (LockHandle write = locks.readWriteLock(name).acquireWrite(Duration.ofSeconds(10))) {
                return write.isValid();
            }
        }).get(30, TimeUnit.SECONDS)).as("the write lock, once the transaction ended").isTrue();
    }

    /**
     * A {@code Uni} method's lock, asked for inside a transaction: its release, when the {@code Uni} completes (on
     * another thread, where the transaction is not), waits for the transaction it was asked in.
     */
    @Test
    void aUniMethodCalledInsideATransactionReleasesAfterTheCommit() throws Exception {
        String name = "tx-inside:uni";
        Ledger.expect(name);
        assertThat(ledger.awaitsUniLocked(name)).isEqualTo(name);
        assertThat(Ledger.releasedBeforeCommit).as("released before the transaction committed").doesNotContain(name);
        assertThat(Ledger.released).as("released once it committed").contains(name);
    }

    /** An acquireAll that fails inside a transaction gives back what it took at once: nothing is left held. */
    @Test
    void anAcquireAllThatFailsInsideATransactionLeavesNothingHeld() throws Exception {
        String free = "tx-inside:all-a";
        String busy = "tx-inside:all-b";
        LockHandle other = Background.supply(() -> locks.acquire(busy, Duration.ZERO)).get(30, TimeUnit.SECONDS);
        try {
            assertThat(ledger.acquireAllFails(free, busy)).as("the first part, free to another thread meanwhile")
                    .isTrue();
        } finally {
            other.release();
        }
    }

    /**
     * The writer writes under the lock in a transaction and, about to commit, waits for the reader's read if its lock
     * was released already; the reader, asking for the lock while the writer holds it, reads as soon as it is granted.
     */
    private void assertTheNextHolderReadsTheCommit(String name, BiConsumer<String, Integer> writer) throws Exception {
        int value = VALUES.incrementAndGet();
        Ledger.expect(name);
        CompletableFuture<Void> writing = Background.run(() -> writer.accept(name, value));
        assertThat(Ledger.inside.get(name).await(DEADLINE.toSeconds(), TimeUnit.SECONDS))
                .as("the writer holds the lock").isTrue();
        CompletableFuture<Integer> reading = Background.supply(() -> locks.withLock(name, DEADLINE, () -> {
            int read = read(name);
            Ledger.read.get(name).countDown();
            return read;
        }));
        writing.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        assertThat(reading.get(DEADLINE.toSeconds(), TimeUnit.SECONDS))
                .as("what the next holder read as soon as it was granted the lock").isEqualTo(value);
        assertThat(Ledger.releasedBeforeCommit).as("locks released before their transaction committed")
                .doesNotContain(name);
    }

    private static int read(String name) {
        return (int) ServerState.queryLong("SELECT COALESCE(MAX(v), -1) FROM tx_commit_inside WHERE name = ?", name);
    }

    @ApplicationScoped
    public static class Ledger {

        static final Map<String, CountDownLatch> inside = new ConcurrentHashMap<>();
        static final Map<String, CountDownLatch> read = new ConcurrentHashMap<>();
        static final Map<String, Boolean> validAfterClose = new ConcurrentHashMap<>();
        /** The names whose lock was released (or lost) since their test began. */
        static final Set<String> released = ConcurrentHashMap.newKeySet();
        static final Set<String> releasedBeforeCommit = ConcurrentHashMap.newKeySet();

        @Inject
        AgroalDataSource dataSource;

        @Inject
        TransactionSynchronizationRegistry registry;

        @Inject
        LockManager locks;

        @Inject
        Inner inner;

        static void expect(String name) {
            inside.put(name, new CountDownLatch(1));
            read.put(name, new CountDownLatch(1));
            released.remove(name);
            releasedBeforeCommit.remove(name);
        }

        void released(@Observes LockEvent event) {
            if (event.kind() != LockEvent.Kind.ACQUIRED) {
                released.add(event.name());
            }
        }

        @Transactional
        @Locked("{name}")
        public void transactionalLocked(String name, int value) {
            writeAndWaitForCommit(name, value);
        }

        @Locked("{name}")
        @Transactional
        public void lockedTransactional(String name, int value) {
            writeAndWaitForCommit(name, value);
        }

        @Transactional
        public void callsLocked(String name, int value) {
            inner.locked(name, value);
        }

        @Transactional
        public void withLockInside(String name, int value) {
            locks.withLock(name, Duration.ZERO, () -> {
                writeAndWaitForCommit(name, value);
                return null;
            });
        }

        @Transactional
        public void handleInside(String name, int value) {
            LockHandle handle = locks.acquire(name, Duration.ZERO);
            try (handle) {
                writeAndWaitForCommit(name, value);
            }
            validAfterClose.put(name, handle.isValid());
        }

        @Transactional
        @Locked("{name}")
        public void failsAfterWriting(String name, int value) {
            write(name, value);
            throw new IllegalStateException("roll back");
        }

        @Transactional
        public String awaitsUniLocked(String name) {
            registry.registerInterposedSynchronization(new Synchronization() {
                @Override
                public void beforeCompletion() {
                    if (released.contains(name)) {
                        releasedBeforeCommit.add(name);
                    }
                }

                @Override
                public void afterCompletion(int status) {
                }
            });
            return inner.uniLocked(name).await().atMost(DEADLINE);
        }

        /** Whether {@code free} could be had by another thread, inside the transaction, after acquireAll failed. */
        @Transactional
        public boolean acquireAllFails(String free, String busy) {
            try {
                locks.acquireAll(java.util.List.of(free, busy), Duration.ZERO).release();
                throw new IllegalStateException("acquireAll took " + busy + ", which another thread holds");
            } catch (io.quarkiverse.mysqllock.LockNotAcquiredException e) {
                return LockApp.freeFor(locks, free);
            }
        }

        @Transactional
        public int twice(String name) {
            return inner.count(name) + inner.count(name);
        }

        @Transactional
        public int readTwice(String name) {
            return inner.reading(name) + inner.reading(name);
        }

        /** Writes, then, once the transaction is about to commit, waits for the reader if the lock is free already. */
        void writeAndWaitForCommit(String name, int value) {
            write(name, value);
            registry.registerInterposedSynchronization(new Synchronization() {
                @Override
                public void beforeCompletion() {
                    if (released.contains(name)) {
                        releasedBeforeCommit.add(name);
                        try {
                            if (!read.get(name).await(DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
                                throw new IllegalStateException("the reader never read, although the lock was free");
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException(e);
                        }
                    }
                }

                @Override
                public void afterCompletion(int status) {
                }
            });
            inside.get(name).countDown();
        }

        void write(String name, int value) {
            try (Connection connection = dataSource.getConnection();
                    PreparedStatement upsert = connection.prepareStatement(
                            "INSERT INTO tx_commit_inside VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)")) {
                upsert.setString(1, name);
                upsert.setInt(2, value);
                upsert.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @ApplicationScoped
    public static class Inner {

        @Inject
        Ledger ledger;

        @Locked("{name}")
        public void locked(String name, int value) {
            ledger.writeAndWaitForCommit(name, value);
        }

        @Locked("{name}")
        public int count(String name) {
            return 1;
        }

        @Locked(value = "{name}", mode = Locked.Mode.READ)
        public int reading(String name) {
            return 1;
        }

        @Locked("{name}")
        public Uni<String> uniLocked(String name) {
            return Uni.createFrom().item(name);
        }
    }
}
