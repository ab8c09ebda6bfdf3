package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.Transactional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/** acquireForTransaction: a row lock that lives exactly as long as the caller's transaction. */
class TransactionScopedLockTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Work.class);

    @Inject
    LockManager locks;

    @Inject
    Work work;

    @Test
    void withoutATransactionItIsRefused() {
        assertThatThrownBy(() -> locks.acquireForTransaction("txl:none", Duration.ZERO))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs an active JTA transaction").hasMessageContaining("@Transactional");
    }

    /**
     * The waiter gets the row at the holder's commit: within a second of it, in the best of three tries (each on a row
     * of its own). A waiter that got it late (a wait that polls) is late every time; a busy machine rarely delays three
     * hand-offs in a row.
     */
    @Test
    void theLockLastsUntilCommit() throws Exception {
        long handOffMillis = LockApp.bestOf3(1000, attempt -> handOffAtCommitMillis("txl:commit-" + attempt));
        assertThat(handOffMillis).as("the best of three hand-offs, in ms").isLessThan(1000);
    }

    /** How long after the holder's commit the waiter got the row's lock, in ms; checked busy until then. */
    private long handOffAtCommitMillis(String name) throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Void> holder = Background.run(() -> work.underLock(name, Duration.ZERO, () -> {
            held.countDown();
            await(finish);
        }));
        try {
            assertThat(held.await(30, TimeUnit.SECONDS)).isTrue();

            LockNotAcquiredException busy = Background.supply(() -> {
                try {
                    work.underLock(name, Duration.ZERO, () -> {
                    });
                    throw new AssertionError("locked a row another transaction holds");
                } catch (LockNotAcquiredException e) {
                    return e;
                }
            }).get(30, TimeUnit.SECONDS);
            assertThat(busy.reason()).isEqualTo(LockNotAcquiredException.Reason.BUSY);

            CompletableFuture<Long> waiter = Background.supply(() -> {
                work.underLock(name, Duration.ofSeconds(10), () -> {
                });
                return System.nanoTime();
            });
            LockApp.await("the waiter to block on the row", Duration.ofSeconds(30), () -> ServerState.queryLong(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT fence FROM mysql_lock%FOR UPDATE%'") > 0);
            long releasedAt = System.nanoTime();
            finish.countDown();
            holder.get(30, TimeUnit.SECONDS);
            long acquiredAt = waiter.get(30, TimeUnit.SECONDS);
            assertThat(acquiredAt).isGreaterThan(releasedAt);
            return TimeUnit.NANOSECONDS.toMillis(acquiredAt - releasedAt);
        } finally {
            finish.countDown();
        }
    }

    @Test
    void aRollbackEndsTheLockToo() throws Exception {
        assertThatThrownBy(() -> work.underLock("txl:rollback", Duration.ZERO, () -> {
            throw new IllegalStateException("roll back");
        })).hasMessage("roll back");
        Background.run(() -> work.underLock("txl:rollback", Duration.ZERO, () -> {
        })).get(10, TimeUnit.SECONDS);
    }

    @Test
    void oneTransactionTakesSeveralLocks() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Void> holder = Background.run(() -> work.underLock("txl:two-a", Duration.ZERO, () -> {
            locks.acquireForTransaction("txl:two-b", Duration.ZERO);
            held.countDown();
            await(finish);
        }));
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        for (String name : new String[] { "txl:two-a", "txl:two-b" }) {
            assertThatThrownBy(() -> Background.run(() -> work.underLock(name, Duration.ZERO, () -> {
            })).get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(LockNotAcquiredException.class);
        }
        finish.countDown();
        holder.get(10, TimeUnit.SECONDS);
    }

    /** A row that disappears (something deletes or renames lock table rows) is an error, not a lock of nothing. */
    @Test
    void aMissingRowIsAnErrorNotALock() {
        ServerState.update("CREATE TRIGGER txl_rename BEFORE INSERT ON mysql_lock FOR EACH ROW"
                + " SET NEW.name = IF(NEW.name = 'txl:renamed', 'txl:renamed-elsewhere', NEW.name)");
        try {
            assertThatThrownBy(() -> work.underLock("txl:renamed", Duration.ZERO, () -> {
            })).isInstanceOf(LockNotAcquiredException.class).hasMessageContaining("missing")
                    .hasMessageContaining("txl:renamed");
        } finally {
            ServerState.update("DROP TRIGGER txl_rename");
        }
    }

    /**
     * A purge removes a row a transaction waits for (it locked the row first, then deleted it): the waiter gets the lock
     * of a row seeded again, not an error. Before, it was refused with DATABASE_ERROR ("its row ... is missing").
     */
    @Test
    void aRowAPurgeRemovesWhileItIsWaitedForIsSeededAgainAndLocked() throws Exception {
        work.underLock("txl:purged", Duration.ZERO, () -> {
        });
        try (Connection purge = TestDatabase.shared().connect()) {
            purge.setAutoCommit(false);
            try (PreparedStatement delete = purge.prepareStatement("DELETE FROM mysql_lock WHERE name = 'txl:purged'")) {
                assertThat(delete.executeUpdate()).isOne();
            }
            CompletableFuture<Void> waiter = Background.run(() -> work.underLock("txl:purged", Duration.ofSeconds(20),
                    () -> {
                    }));
            LockApp.await("the waiter to block on the row", Duration.ofSeconds(10), () -> ServerState.queryLong(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT fence FROM mysql_lock%FOR UPDATE%'") > 0);
            purge.commit();
            waiter.get(20, TimeUnit.SECONDS);
        }
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock WHERE name = 'txl:purged'")).isOne();
    }

    /** A row a transaction just locked counts as used: a purge of rows unused for an hour keeps it. */
    @Test
    void aPurgeKeepsTheRowOfARecentTransactionLock() {
        work.underLock("txl:recent", Duration.ZERO, () -> {
        });
        locks.purgeUnused(Duration.ofHours(1));
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM mysql_lock WHERE name = 'txl:recent'")).isOne();
    }

    /**
     * InnoDB rolls the whole transaction back on a deadlock: a caller that catches the exception and goes on must not
     * commit only what came after, so the JTA transaction is marked rollback-only.
     */
    @Test
    void aDeadlockMarksTheTransactionRollbackOnly() throws Exception {
        ServerState.update("CREATE TABLE IF NOT EXISTS txl_side (owner VARCHAR(10) PRIMARY KEY)");
        CountDownLatch bothHoldOne = new CountDownLatch(2);
        AtomicReference<LockNotAcquiredException> victim = new AtomicReference<>();
        AtomicInteger statusAfterDeadlock = new AtomicInteger(-1);
        CompletableFuture<Void> first = Background.run(() -> work.crossing("a", "txl:dl-a", "txl:dl-b", bothHoldOne,
                victim, statusAfterDeadlock));
        CompletableFuture<Void> second = Background.run(() -> work.crossing("b", "txl:dl-b", "txl:dl-a", bothHoldOne,
                victim, statusAfterDeadlock));
        CompletableFuture.allOf(first, second).exceptionally(e -> null).get(30, TimeUnit.SECONDS);

        assertThat(victim.get()).as("one transaction was the deadlock's victim").isNotNull();
        assertThat(victim.get().reason()).as(victim.get().getMessage()).isEqualTo(LockNotAcquiredException.Reason.DEADLOCK);
        assertThat(victim.get().getMessage()).contains("rollback-only");
        assertThat(statusAfterDeadlock.get()).isEqualTo(Status.STATUS_MARKED_ROLLBACK);
        // the victim wrote its row after catching the exception: it must not have been committed
        assertThat(ServerState.queryLong("SELECT COUNT(*) FROM txl_side")).isEqualTo(1);
    }

    /** A hold of the test's own, ended when the test says: one it never ends fails loudly, never ends by itself. */
    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never let the transaction end");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Singleton
    public static class Work {
        @Inject
        LockManager locks;

        @Inject
        TransactionManager transactions;

        @Inject
        AgroalDataSource dataSource;

        /** Locks one name, then the other; a deadlock victim records what it saw and writes its row anyway. */
        @Transactional
        public void crossing(String owner, String firstName, String secondName, CountDownLatch bothHoldOne,
                AtomicReference<LockNotAcquiredException> victim, AtomicInteger statusAfterDeadlock) {
            locks.acquireForTransaction(firstName, Duration.ZERO);
            bothHoldOne.countDown();
            await(bothHoldOne);
            try {
                locks.acquireForTransaction(secondName, Duration.ofSeconds(10));
            } catch (LockNotAcquiredException e) {
                victim.set(e);
                try {
                    statusAfterDeadlock.set(transactions.getStatus());
                } catch (jakarta.transaction.SystemException status) {
                    throw new IllegalStateException(status);
                }
            }
            try (java.sql.Connection connection = dataSource.getConnection();
                    java.sql.PreparedStatement insert = connection
                            .prepareStatement("INSERT INTO txl_side (owner) VALUES (?)")) {
                insert.setString(1, owner);
                insert.executeUpdate();
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        @Transactional
        public void underLock(String name, Duration wait, Runnable inside) {
            locks.acquireForTransaction(name, wait);
            inside.run();
        }
    }
}
