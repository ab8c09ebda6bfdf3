package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A lease row held by a user transaction for longer than the ttl (a locking read of the fence, acquireForTransaction on
 * a leased name) costs that lease only: the others the instance holds go on being renewed. (Renewal was one statement
 * per 2,000 leases, which waited for the one locked row until every lease of the batch expired.) A release refused
 * by a row lock is tried again once the row is free, rather than leave the lease taken by nobody until its ttl.
 */
class RenewalUnderRowLocksTest {

    static final String TABLE = "renewal_row_lock";

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    /**
     * A 3 s ttl: the blocked lease is lost within seconds, and the others, renewed every second, survive a busy machine
     * meanwhile (with 1 s, a renewal about half a second late lost one of them).
     */
    @Test
    void oneLockedRowCostsOnlyItsOwnLease() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("row-locked").mode(Mode.LEASE).table(TABLE)
                .ttl(Duration.ofSeconds(3)).start()) {
            LockHandle blocked = instance.locks.acquire("rowlock:blocked", Duration.ZERO);
            LockHandle[] others = new LockHandle[3];
            CopyOnWriteArrayList<LockLostException> othersLost = new CopyOnWriteArrayList<>();
            for (int i = 0; i < others.length; i++) {
                others[i] = instance.locks.acquire("rowlock:other-" + i, Duration.ZERO).onLost(othersLost::add);
            }
            try (Connection transaction = TestDatabase.shared().connect();
                    Statement statement = transaction.createStatement()) {
                transaction.setAutoCommit(false);
                statement.executeQuery("SELECT fence FROM " + TABLE + " WHERE name = 'rowlock:blocked' FOR UPDATE").close();
                // the blocked lease cannot be renewed: it is lost once its ttl runs out, 3 renewal periods
                LockApp.await("the blocked lease to be reported lost", Duration.ofSeconds(30), () -> !blocked.isValid());
                long renewedBefore = expiresAtMicros("rowlock:other-0");
                LockApp.await("the other leases to be renewed again", Duration.ofSeconds(30),
                        () -> expiresAtMicros("rowlock:other-0") > renewedBefore);
                transaction.rollback();
            }
            for (LockHandle other : others) {
                assertThat(other.isValid()).isTrue();
                other.release();
            }
            assertThat(othersLost).isEmpty();
            blocked.release();
        }
    }

    /**
     * A lease another instance took (a take-over, or forceRelease and a new take) whose row a transaction holds when
     * the renewal comes is found lost at that renewal: a plain read of the owner needs no row lock. Before, the refused
     * renewal was tried again a period later, and again, until the lease expired. Found by the clean-clone CI run of
     * 3098714: AdminApiTest's former holder was told LEASE_EXPIRED 5.8 s after a forceRelease (ttl 6 s), not NOT_HELD at
     * its next renewal (the new holder's renewals of the same row, at the same phase, refused its own).
     */
    @Test
    void aLeaseTakenOverIsFoundLostWhileItsRowIsLocked() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("taken-row-locked").mode(Mode.LEASE).table(TABLE)
                .ttl(Duration.ofSeconds(6)).start()) {
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            LockHandle held = instance.locks.acquire("rowlock:taken", Duration.ZERO).onLost(lost::add);
            try (Connection transaction = TestDatabase.shared().connect();
                    Statement statement = transaction.createStatement()) {
                statement.executeUpdate("UPDATE " + TABLE + " SET owner = 'vm/1/another' WHERE name = 'rowlock:taken'");
                transaction.setAutoCommit(false);
                statement.executeQuery("SELECT fence FROM " + TABLE + " WHERE name = 'rowlock:taken' FOR UPDATE").close();
                LockApp.await("the lease to be found lost", Duration.ofSeconds(20), () -> !lost.isEmpty());
                transaction.rollback();
            }
            assertThat(lost.get(0).reason()).as(lost.get(0).getMessage()).isEqualTo(LockLostException.Reason.NOT_HELD);
            assertThat(held.isValid()).isFalse();
            held.release();
        }
    }

    @Test
    void aReleaseRefusedByARowLockIsDoneOnceTheRowIsFree() throws Exception {
        // the server's row-lock wait for new sessions, 1 s (50 s by default): the release's statement is refused soon
        ServerState.update("SET GLOBAL innodb_lock_wait_timeout = 1");
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("release-row-locked").mode(Mode.LEASE).table(TABLE)
                .ttl(Duration.ofSeconds(30)).start()) {
            LockHandle held = instance.locks.acquire("rowlock:release", Duration.ZERO);
            try (Connection transaction = TestDatabase.shared().connect();
                    Statement statement = transaction.createStatement()) {
                transaction.setAutoCommit(false);
                statement.executeQuery("SELECT fence FROM " + TABLE + " WHERE name = 'rowlock:release' FOR UPDATE").close();
                held.release();
                assertThat(owner("rowlock:release")).as("the lease while its row is locked").isNotNull();
                transaction.rollback();
            }
            // once the row is free, the lease ends: not 30 s later, by its ttl
            LockApp.await("the lease to be given up", Duration.ofSeconds(10), () -> owner("rowlock:release") == null);
            assertThat(instance.locks.tryAcquire("rowlock:release")).as("taken again at once").isPresent()
                    .get().satisfies(LockHandle::release);
        } finally {
            ServerState.update("SET GLOBAL innodb_lock_wait_timeout = DEFAULT");
        }
    }

    private static String owner(String name) {
        return ServerState.queryString("SELECT owner FROM " + TABLE + " WHERE name = ?", name);
    }

    private static long expiresAtMicros(String name) {
        return ServerState.queryLong("SELECT ROUND(UNIX_TIMESTAMP(expires_at) * 1000000) FROM " + TABLE + " WHERE name = ?",
                name);
    }
}
