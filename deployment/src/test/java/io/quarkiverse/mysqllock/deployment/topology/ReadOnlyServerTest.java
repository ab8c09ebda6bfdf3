package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.table.LockTable;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * The lock database turns read-only mid-run, as in a failover that demotes the primary while the pool keeps its
 * connections to it (Aurora-style), or a primary set read-only: held named locks there are reported lost with their own
 * reason (they are invisible to the writable server), acquisitions fail as READ_ONLY rather than as a generic error,
 * and new acquisitions succeed again once the pool reaches a writable server.
 */
class ReadOnlyServerTest {

    static final Duration KEEPALIVE = Duration.ofMillis(300);
    static TestDatabase first;
    static TestDatabase second;

    @BeforeAll
    static void startServersWithGrants() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
        first = withApplicationUser(TestDatabase.startEmbedded().withPrivilegeChecks());
        second = withApplicationUser(TestDatabase.startEmbedded().withPrivilegeChecks());
    }

    /** read_only binds users without SUPER only: a plain application user. */
    private static TestDatabase withApplicationUser(TestDatabase server) {
        try (Connection root = server.connect(); Statement statement = root.createStatement()) {
            statement.execute(new LockTable("mysql_lock", true).ddl());
            statement.execute("CREATE USER 'app'@'%' IDENTIFIED BY 'app'");
            statement.execute("GRANT SELECT, INSERT, UPDATE ON locktest.* TO 'app'@'%'");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return server;
    }

    @AfterAll
    static void stop() {
        for (TestDatabase server : new TestDatabase[] { first, second }) {
            if (server != null) {
                server.stop();
            }
        }
    }

    @Test
    void aNamedLockOnADemotedPrimaryIsLostAndTheNextLockReachesTheNewOne() throws Exception {
        try (TcpProxy address = TcpProxy.start("writer-address", first.port());
                StandaloneLocks instance = StandaloneLocks.Settings.of("demoted").on(first.via(address).as("app", "app"))
                        .mode(Mode.NAMED).keepalive(KEEPALIVE).start()) {
            LockHandle held = instance.locks.acquire("failover:held", Duration.ZERO);
            AtomicReference<LockLostException> lost = new AtomicReference<>();
            held.onLost(lost::set);

            // the failover: the old primary is demoted, the address now leads to the new one; pooled connections stay
            first.execute("SET GLOBAL read_only = 1");
            address.redirect(second.port());
            try {
                LockApp.await("the loss to be reported", KEEPALIVE.multipliedBy(5), () -> lost.get() != null);
                assertThat(lost.get().reason()).isEqualTo(LockLostException.Reason.READ_ONLY);
                assertThat(held.isValid()).isFalse();

                try (LockHandle next = instance.locks.acquire("failover:next", Duration.ofSeconds(2))) {
                    assertThat(holderOn(second, "failover:next")).as("taken on the writable server").isNotZero();
                    assertThat(holderOn(first, "failover:next")).isZero();
                }
                held.release();
            } finally {
                first.execute("SET GLOBAL read_only = 0");
            }
        }
    }

    /**
     * The failover is found by a grant (the shared session the thread used, still on the demoted primary, answers
     * read-only), and the lock then waits until this instance is a member of its fleet where new connections lead: the
     * renewals that follow there end nothing. Before, the lock was granted on the new primary under the old server's
     * confirmation, and the first renewal there (no membership row: the lapse of a new server) ended it.
     */
    @Test
    void theFirstLockAfterAFailoverWaitsUntilThisInstanceIsAMemberWhereItIsGranted() {
        try (TcpProxy address = TcpProxy.start("writer-address-2", first.port());
                StandaloneLocks instance = StandaloneLocks.Settings.of("found-by-grant")
                        .on(first.via(address).as("app", "app")).mode(Mode.NAMED).keepalive(Duration.ofSeconds(1))
                        .start()) {
            LockHandle held = instance.locks.acquire("failover-2:held", Duration.ZERO);
            first.execute("SET GLOBAL read_only = 1");
            address.redirect(second.port());
            try {
                LockHandle next = instance.locks.acquire("failover-2:next", Duration.ofSeconds(5));
                assertThat(holderOn(second, "failover-2:next")).as("taken on the writable server").isNotZero();
                long membershipAtGrant = membershipEnd(second, "found-by-grant");
                LockApp.await("a renewal of the membership on the new server", Duration.ofSeconds(10),
                        () -> membershipEnd(second, "found-by-grant") > membershipAtGrant);
                assertThat(next.isValid()).as("still held after the renewals there").isTrue();
                assertThat(holderOn(second, "failover-2:next")).isNotZero();
                assertThat(held.isValid()).as("the lock on the demoted primary").isFalse();
                next.release();
                held.release();
            } finally {
                first.execute("SET GLOBAL read_only = 0");
            }
        }
    }

    /** When this instance's membership row on the server ends, in microseconds (0 without a row). */
    private static long membershipEnd(TestDatabase server, String instanceId) {
        return server.queryLong("SELECT COALESCE(MAX(TIMESTAMPDIFF(MICROSECOND, '1970-01-01', expires_at)), 0)"
                + " FROM mysql_lock WHERE name LIKE '~live~%' AND owner LIKE ?", "NAMED %/" + instanceId + "#%");
    }

    @Test
    void aReadOnlyServerRefusesAcquisitionsAsReadOnlyUntilItIsWritableAgain() {
        for (Mode mode : new Mode[] { Mode.NAMED, Mode.LEASE }) {
            try (StandaloneLocks instance = StandaloneLocks.Settings.of("read-only-" + mode).on(second.as("app", "app"))
                    .mode(mode).keepalive(KEEPALIVE).start()) {
                instance.locks.acquire("ro:warm-up", Duration.ZERO).release();
                second.execute("SET GLOBAL read_only = 1");
                try {
                    assertThatThrownBy(() -> instance.locks.acquire("ro:" + mode, Duration.ZERO))
                            .isInstanceOf(LockNotAcquiredException.class).as(mode.toString())
                            .satisfies(e -> assertThat(((LockNotAcquiredException) e).reason())
                                    .isEqualTo(LockNotAcquiredException.Reason.READ_ONLY))
                            .hasMessageContaining("read-only");
                } finally {
                    second.execute("SET GLOBAL read_only = 0");
                }
                try (LockHandle handle = instance.locks.acquire("ro:" + mode, Duration.ofSeconds(2))) {
                    assertThat(handle.isValid()).isTrue();
                }
            }
        }
    }

    /**
     * An instance that starts against a read-only server (a replica) can read the fleet's record but not join it: it
     * answers queries, refuses acquisitions as READ_ONLY, and joins once the server is writable.
     */
    @Test
    void anInstanceStartingOnAReadOnlyServerJoinsItsFleetOnceItIsWritable() {
        second.execute("SET GLOBAL read_only = 1");
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("replica-reader").on(second.as("app", "app"))
                .start()) {
            try {
                assertThat(instance.locks.mode()).as("read-only: LEASE, as AUTO chooses there").isEqualTo(LockMode.LEASE);
                assertThat(instance.locks.isLocked("ro:reader")).isFalse();
                assertThatThrownBy(() -> instance.locks.acquire("ro:reader", Duration.ZERO))
                        .isInstanceOf(LockNotAcquiredException.class)
                        .satisfies(e -> assertThat(((LockNotAcquiredException) e).reason())
                                .isEqualTo(LockNotAcquiredException.Reason.READ_ONLY));
            } finally {
                second.execute("SET GLOBAL read_only = 0");
            }
            try (LockHandle handle = instance.locks.acquire("ro:reader", Duration.ofSeconds(2))) {
                assertThat(handle.isValid()).isTrue();
            }
        }
    }

    private static long holderOn(TestDatabase server, String name) {
        return server.queryLong("SELECT COALESCE(IS_USED_LOCK(?), 0)", name);
    }
}
