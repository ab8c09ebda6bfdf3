package io.quarkiverse.mysqllock.deployment.transaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.SystemException;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.Transactional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * Fenced commits ({@code quarkus.mysql-lock.fenced-commit=true}): a transaction that ran under a lock does not commit
 * once a later holder was granted the lock, though this holder does not know it lost the lock (a NAMED session killed,
 * a lease taken over by another instance). Each engine's class says how a later holder is granted
 * ({@link #grantToALaterHolder}).
 */
abstract class FencedCommitContract {

    private static final AtomicInteger VALUES = new AtomicInteger(5000);

    @BeforeAll
    static void createTable() {
        TestDatabase.shared().execute("CREATE TABLE IF NOT EXISTS tx_fenced (name VARCHAR(100) PRIMARY KEY, v INT)");
    }

    @Inject
    LockManager locks;

    @Inject
    Accounts accounts;

    @Inject
    AgroalDataSource dataSource;

    /** Grants the lock to a later holder while this instance still holds it and does not know it lost it. */
    abstract void grantToALaterHolder(String name) throws Exception;

    /** Ends what {@link #grantToALaterHolder} left (the later holder's lock). */
    @AfterEach
    void endTheLaterHolders() throws Exception {
        Accounts.meanwhile = name -> {
        };
    }

    /** The commit of a transaction that a {@code @Locked} method begins (a {@code @Transactional} method it calls). */
    @Test
    void aTransactionBegunUnderTheLockDoesNotCommitOnceALaterHolderWasGranted() {
        String name = "fenced:inner";
        int value = VALUES.incrementAndGet();
        Accounts.meanwhile = this::granted;
        assertThatThrownBy(() -> accounts.lockedCallingTransactional(name, value))
                .as("the commit refused").satisfies(FencedCommitContract::causedByALoss);
        assertThat(written(name)).as("what the transaction wrote").isNotEqualTo(value);
    }

    /** {@code @Transactional @Locked}: the lock's release inside the transaction finds it stale. */
    @Test
    void aTransactionalLockedMethodDoesNotCommitOnceALaterHolderWasGranted() {
        String name = "fenced:outer";
        int value = VALUES.incrementAndGet();
        Accounts.meanwhile = this::granted;
        assertThatThrownBy(() -> accounts.transactionalLocked(name, value)).isInstanceOf(LockLostException.class)
                .hasMessageContaining(name);
        assertThat(written(name)).as("what the transaction wrote").isNotEqualTo(value);
    }

    /** Nothing changes for a holder that kept its lock: both kinds of transaction commit. */
    @Test
    void aHolderThatKeptItsLockCommits() {
        int inner = VALUES.incrementAndGet();
        accounts.lockedCallingTransactional("fenced:kept-inner", inner);
        assertThat(written("fenced:kept-inner")).isEqualTo(inner);
        int outer = VALUES.incrementAndGet();
        accounts.transactionalLocked("fenced:kept-outer", outer);
        assertThat(written("fenced:kept-outer")).isEqualTo(outer);
        assertThat(LockApp.freeFor(locks, "fenced:kept-outer")).as("released after the commit").isTrue();
    }

    /**
     * A transaction marked rollback-only commits nothing: its lock is released at once, unchecked (a LEASE give-up would
     * otherwise wait for the row lock the check keeps in the transaction: 50 s before it was fixed).
     */
    @Test
    void aTransactionMarkedRollbackOnlyReleasesItsLockAtOnce() throws Exception {
        String name = "fenced:rollback-only";
        long start = System.nanoTime();
        accounts.transactionalLockedRollbackOnly(name, VALUES.incrementAndGet());
        assertThat(LockApp.millisSince(start)).as("ms to run, roll back and release").isLessThan(30_000);
        assertThat(written(name)).isEqualTo(-1);
        assertThat(LockApp.otherThreadAcquires(locks, name)).as("released").isTrue();
    }

    /** {@code LockManager.fence} on a transaction run by hand: refused once a later holder was granted the lock. */
    @Test
    void fenceRefusesAHandRunTransactionOnceALaterHolderWasGranted() throws Exception {
        String name = "fenced:by-hand";
        int value = VALUES.incrementAndGet();
        try (LockHandle lock = locks.acquire(name, Duration.ZERO); Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            Writes.upsert(connection, name, value);
            locks.fence(lock, connection);
            connection.commit(); // kept: committed
            Writes.upsert(connection, name, value + 1);
            grantToALaterHolder(name);
            assertThatThrownBy(() -> locks.fence(lock, connection)).isInstanceOf(LockLostException.class)
                    .hasMessageContaining(name);
            connection.rollback();
        }
        assertThat(written(name)).isEqualTo(value);
    }

    private void granted(String name) {
        try {
            grantToALaterHolder(name);
        } catch (Exception e) {
            throw new IllegalStateException("The lock could not be granted to a later holder", e);
        }
    }

    private static void causedByALoss(Throwable thrown) {
        Throwable cause = thrown;
        while (cause != null && !(cause instanceof LockLostException)) {
            cause = cause.getCause();
        }
        assertThat(cause).as("a LockLostException among the causes of " + thrown).isNotNull();
    }

    private static long written(String name) {
        return ServerState.queryLong("SELECT COALESCE(MAX(v), -1) FROM tx_fenced WHERE name = ?", name);
    }

    @ApplicationScoped
    public static class Accounts {

        /** What happens between a write and its commit: a later holder is granted the lock, or nothing. */
        static volatile Consumer<String> meanwhile = name -> {
        };

        @Inject
        AgroalDataSource dataSource;

        @Inject
        Writes writes;

        @Inject
        TransactionManager transactions;

        @Inject
        LockManager locks;

        @Locked("{name}")
        public void lockedCallingTransactional(String name, int value) {
            writes.write(name, value);
        }

        @Transactional
        @Locked("{name}")
        public void transactionalLocked(String name, int value) {
            writes.writeNow(name, value);
            meanwhile.accept(name);
        }

        /** Writes under a lock it releases inside the transaction (checked then), then waits before committing. */
        @Transactional
        public void releasesThenWaits(String name, CountDownLatch checked, CountDownLatch commit) throws Exception {
            locks.withLock(name, Duration.ZERO, () -> {
                writes.writeNow(name, 1);
                return null;
            });
            checked.countDown();
            if (!commit.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never told to commit");
            }
        }

        @Transactional
        @Locked("{name}")
        public void transactionalLockedRollbackOnly(String name, int value) throws SystemException {
            writes.writeNow(name, value);
            transactions.setRollbackOnly();
        }
    }

    @ApplicationScoped
    public static class Writes {

        @Inject
        AgroalDataSource dataSource;

        @Transactional
        public void write(String name, int value) {
            writeNow(name, value);
            Accounts.meanwhile.accept(name);
        }

        void writeNow(String name, int value) {
            try (Connection connection = dataSource.getConnection()) {
                upsert(connection, name, value);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        static void upsert(Connection connection, String name, int value) throws SQLException {
            try (PreparedStatement upsert = connection.prepareStatement(
                    "INSERT INTO tx_fenced VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)")) {
                upsert.setString(1, name);
                upsert.setInt(2, value);
                upsert.executeUpdate();
            }
        }
    }
}
