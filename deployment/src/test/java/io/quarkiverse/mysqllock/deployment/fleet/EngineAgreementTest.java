package io.quarkiverse.mysqllock.deployment.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TcpProxy;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.test.QuarkusUnitTest;

/**
 * One fleet, one engine: a named lock and a lease of the same name never exclude each other, so instances sharing a
 * lock table use the engine recorded there while the fleet runs, whatever their own probes say. (Each instance used to
 * decide alone, from signals that change: a replica reconnecting, a URL with autoReconnect.)
 */
class EngineAgreementTest {

    static final String TABLE = "agree_lock";

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    static StandaloneLocks.Settings instance(String id) {
        return StandaloneLocks.Settings.of(id).table(TABLE).keepalive(Duration.ofMillis(200)).ttl(Duration.ofSeconds(1));
    }

    @Test
    void instancesWhoseProbesDisagreeUseTheEngineTheFleetRecorded() throws Exception {
        try (StandaloneLocks first = instance("agree-first").replication(false).start();
                StandaloneLocks second = instance("agree-second").replication(true).start()) {
            assertThat(first.locks.mode()).isEqualTo(LockMode.NAMED);
            assertThat(second.locks.mode()).as("its own probe says LEASE; the fleet says NAMED").isEqualTo(LockMode.NAMED);
            try (LockHandle held = first.locks.acquire("agree:x", Duration.ZERO)) {
                assertThat(Background.supply(() -> second.locks.tryAcquire("agree:x")).get()).isEmpty();
            }
            assertThat(ServerState.queryString("SELECT owner FROM " + TABLE + " WHERE name = '~engine'"))
                    .startsWith("NAMED chosen by ").contains("agree-first");
        }
        // the whole fleet stopped: the next instance decides again, and the fleet after it follows
        try (StandaloneLocks third = instance("agree-third").replication(true).start();
                StandaloneLocks fourth = instance("agree-fourth").replication(false).start()) {
            assertThat(third.locks.mode()).isEqualTo(LockMode.LEASE);
            assertThat(fourth.locks.mode()).isEqualTo(LockMode.LEASE);
            try (LockHandle held = fourth.locks.acquire("agree:y", Duration.ZERO)) {
                assertThat(Background.supply(() -> third.locks.tryAcquire("agree:y")).get()).isEmpty();
            }
        }
    }

    @Test
    void anExplicitlyOtherEngineIsRefusedWhileTheFleetRunsAndTakesOverOnceItStopped() {
        StandaloneLocks running = instance("agree-running").mode(Mode.NAMED).start();
        try {
            assertThatThrownBy(() -> instance("agree-switcher").mode(Mode.LEASE).start())
                    .isInstanceOf(ConfigurationException.class).hasMessageContaining("uses the NAMED engine")
                    .hasMessageContaining("quarkus.mysql-lock.mode=lease").hasMessageContaining("agree-running")
                    .hasMessageContaining("stop every instance");
        } finally {
            running.close();
        }
        try (StandaloneLocks switched = instance("agree-switcher").mode(Mode.LEASE).start();
                StandaloneLocks follower = instance("agree-follower").replication(false).start()) {
            assertThat(switched.locks.mode()).isEqualTo(LockMode.LEASE);
            assertThat(follower.locks.mode()).isEqualTo(LockMode.LEASE);
        }
    }

    @Test
    void anInstanceThatCannotHoldNamedLocksIsRefusedByANamedFleet() {
        try (StandaloneLocks running = instance("agree-named-fleet").replication(false).start()) {
            assertThat(running.locks.mode()).isEqualTo(LockMode.NAMED);
            TestDatabase reconnecting = TestDatabase.shared().withUrl(TestDatabase.shared().jdbcUrl() + "?autoReconnect=true");
            assertThatThrownBy(() -> instance("agree-reconnecting").on(reconnecting).start())
                    .isInstanceOf(ConfigurationException.class).hasMessageContaining("cannot hold named locks")
                    .hasMessageContaining("autoReconnect");
        }
    }

    @Test
    void instancesStartingTogetherAgreeOnOneEngine() throws Exception {
        for (int round = 0; round < 3; round++) {
            CyclicBarrier start = new CyclicBarrier(2);
            CompletableFuture<StandaloneLocks> named = Background.supply(() -> {
                await(start);
                return instance("agree-race-n").replication(false).start();
            });
            CompletableFuture<StandaloneLocks> leased = Background.supply(() -> {
                await(start);
                return instance("agree-race-l").replication(true).start();
            });
            try (StandaloneLocks a = named.get(30, TimeUnit.SECONDS); StandaloneLocks b = leased.get(30, TimeUnit.SECONDS)) {
                assertThat(a.locks.mode()).isEqualTo(b.locks.mode());
            }
        }
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * An instance paused or cut off for longer than its membership lasts loses its locks, the fleet may then move to the
     * other engine, and the instance, once back, grants nothing any more.
     */
    @Test
    void anInstanceWhoseMembershipLapsedLosesItsLocksAndIsOutOnceTheFleetMoved() throws Exception {
        TestDatabase db = TestDatabase.shared();
        try (TcpProxy proxy = TcpProxy.start("agree-lapse", db.port());
                StandaloneLocks lapsing = instance("agree-lapsing").on(db.via(proxy)).mode(Mode.NAMED).start()) {
            LockHandle held = lapsing.locks.acquire("agree:lapse", Duration.ZERO);
            AtomicReference<LockLostException> lost = new AtomicReference<>();
            held.onLost(lost::set);
            proxy.stall();
            StandaloneLocks moved = null;
            try {
                LockApp.await("the lapse to be reported", Duration.ofSeconds(30), () -> lost.get() != null);
                assertThat(lost.get().reason()).isIn(LockLostException.Reason.MEMBERSHIP_LOST,
                        LockLostException.Reason.CONNECTION_LOST);
                assertThat(held.isValid()).isFalse();
                // its membership expired on the server: the fleet may move to leases
                moved = instance("agree-moved").mode(Mode.LEASE).start();
                assertThat(moved.locks.mode()).isEqualTo(LockMode.LEASE);
            } finally {
                proxy.resume();
            }
            try {
                assertThatThrownBy(() -> lapsing.locks.acquire("agree:after", Duration.ZERO))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("moved to the other engine")
                        .hasMessageContaining("Restart it");
            } finally {
                moved.close();
            }
            held.release();
        }
    }

    /**
     * The membership lapses while the lock's own session stays healthy (its renewal is blocked): the holder is told,
     * and the lock is freed on the server, whether or not the holder releases it. (A lock told lost but left held by a
     * live session blocked its name for good.)
     */
    @Test
    void aLapsedMembershipFreesItsNamedLocksOnTheServer() throws Exception {
        try (StandaloneLocks instance = instance("agree-blocked").mode(Mode.NAMED).keepalive(Duration.ofMillis(100))
                .ttl(Duration.ofMillis(500)).start()) {
            LockHandle kept = instance.locks.acquire("agree:kept", Duration.ZERO);
            LockHandle released = Background.supply(() -> instance.locks.acquire("agree:released", Duration.ZERO)).get();
            AtomicReference<LockLostException> lost = new AtomicReference<>();
            kept.onLost(lost::set);
            try (java.sql.Connection transaction = TestDatabase.shared().connect();
                    java.sql.Statement statement = transaction.createStatement()) {
                transaction.setAutoCommit(false);
                statement
                        .executeQuery("SELECT * FROM " + TABLE + " WHERE name LIKE '~live~%' AND owner LIKE '%/agree-blocked#%'"
                                + " FOR UPDATE")
                        .close();
                LockApp.await("the lapse to be reported", Duration.ofSeconds(30), () -> lost.get() != null);
                assertThat(lost.get().reason()).isEqualTo(LockLostException.Reason.MEMBERSHIP_LOST);
                assertThat(released.isValid()).isFalse();
                released.release();
                LockApp.await("both locks to be free on the server", Duration.ofSeconds(30),
                        () -> ServerState.holder("agree:kept").isEmpty() && ServerState.holder("agree:released").isEmpty());
                transaction.rollback();
            }
            kept.release();
            // and the instance grants again once its membership is confirmed
            try (LockHandle again = instance.locks.acquire("agree:kept", Duration.ofSeconds(30))) {
                assertThat(again.isValid()).isTrue();
            }
        }
    }

    /**
     * The membership lapses while a thread waits in GET_LOCK on a session of its own: the wait ends, and the grant that
     * would follow is never made (a session not yet holding a lock was not ended by a lapse, and its later grant was
     * registered under a lapsed membership).
     */
    @Test
    void aLapseDuringAWaitVoidsTheGrant() throws Exception {
        try (StandaloneLocks holder = instance("agree-wait-holder").mode(Mode.NAMED).start();
                StandaloneLocks waiter = instance("agree-waiter").mode(Mode.NAMED).keepalive(Duration.ofMillis(100))
                        .ttl(Duration.ofMillis(500)).start()) {
            LockHandle blocking = holder.locks.acquire("agree:wait", Duration.ZERO);
            LockHandle witness = waiter.locks.acquire("agree:witness", Duration.ZERO);
            AtomicReference<LockLostException> lost = new AtomicReference<>();
            witness.onLost(lost::set);
            CompletableFuture<LockHandle> waiting = Background
                    .supply(() -> waiter.locks.acquire("agree:wait", Duration.ofSeconds(20)));
            LockApp.await("the waiter to wait in GET_LOCK", Duration.ofSeconds(30),
                    () -> ServerState.waitingInGetLock() == 1);
            try (java.sql.Connection transaction = TestDatabase.shared().connect()) {
                transaction.setAutoCommit(false);
                blockMembership(transaction, "agree-waiter");
                LockApp.await("the lapse to be reported", Duration.ofSeconds(30), () -> lost.get() != null);
                assertThat(lost.get().reason()).isEqualTo(LockLostException.Reason.MEMBERSHIP_LOST);
                blocking.release();
                assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(
                        io.quarkiverse.mysqllock.LockNotAcquiredException.class);
                assertThat(ServerState.holder("agree:wait")).isEmpty();
                transaction.rollback();
            }
            witness.release();
            try (LockHandle again = waiter.locks.acquire("agree:wait", Duration.ofSeconds(30))) {
                assertThat(again.isValid()).isTrue();
            }
        }
    }

    /**
     * A lease held across a lapse of its instance's membership is lost too: the fleet may have moved to named locks
     * meanwhile, which a lease does not exclude. Nothing is granted until the membership is confirmed again, and the
     * lost lease is given up on the server at its release.
     */
    @Test
    void aLapsedMembershipLosesLeasesAndGrantsNoneUntilConfirmed() throws Exception {
        try (StandaloneLocks instance = instance("agree-lease-lapse").mode(Mode.LEASE).ttl(Duration.ofMillis(600))
                .start()) {
            LockHandle held = instance.locks.acquire("agree:lease", Duration.ZERO);
            AtomicReference<LockLostException> lost = new AtomicReference<>();
            held.onLost(lost::set);
            try (java.sql.Connection transaction = TestDatabase.shared().connect()) {
                transaction.setAutoCommit(false);
                blockMembership(transaction, "agree-lease-lapse");
                LockApp.await("the lapse to be reported", Duration.ofSeconds(30), () -> lost.get() != null);
                assertThat(lost.get().reason()).isEqualTo(LockLostException.Reason.MEMBERSHIP_LOST);
                assertThat(held.isValid()).isFalse();
                assertThatThrownBy(() -> instance.locks.acquire("agree:lease-other", Duration.ZERO))
                        .isInstanceOf(io.quarkiverse.mysqllock.LockNotAcquiredException.class)
                        .hasMessageContaining("membership");
                held.release();
                assertThat(ServerState.queryString("SELECT owner FROM " + TABLE
                        + " WHERE name = 'agree:lease' AND expires_at > UTC_TIMESTAMP(6)")).isNull();
                transaction.rollback();
            }
            try (LockHandle again = instance.locks.acquire("agree:lease", Duration.ofSeconds(30))) {
                assertThat(again.isValid()).isTrue();
            }
        }
    }

    /** Every lapse is reported, not only the first: a confirmation in between never hides the next one. */
    @Test
    void everyLapseIsReported() throws Exception {
        try (StandaloneLocks instance = instance("agree-relapse").mode(Mode.NAMED).keepalive(Duration.ofMillis(100))
                .ttl(Duration.ofMillis(500)).start()) {
            for (int lapse = 1; lapse <= 3; lapse++) {
                LockHandle held = instance.locks.acquire("agree:relapse", Duration.ofSeconds(30));
                AtomicReference<LockLostException> lost = new AtomicReference<>();
                held.onLost(lost::set);
                try (java.sql.Connection transaction = TestDatabase.shared().connect()) {
                    transaction.setAutoCommit(false);
                    blockMembership(transaction, "agree-relapse");
                    LockApp.await("lapse " + lapse + " to be reported", Duration.ofSeconds(30), () -> lost.get() != null);
                    assertThat(lost.get().reason()).isEqualTo(LockLostException.Reason.MEMBERSHIP_LOST);
                    LockApp.await("the lock of lapse " + lapse + " to be freed on the server", Duration.ofSeconds(30),
                            () -> ServerState.holder("agree:relapse").isEmpty());
                    transaction.rollback();
                }
                held.release();
            }
        }
    }

    /** Holds an instance's membership row in a transaction, so that its renewals fail. */
    private static void blockMembership(java.sql.Connection transaction, String instanceId) throws Exception {
        try (java.sql.PreparedStatement statement = transaction.prepareStatement("SELECT name FROM " + TABLE
                + " WHERE name LIKE '~live~%' AND owner LIKE ? FOR UPDATE")) {
            statement.setString(1, "%/" + instanceId + "#%");
            try (java.sql.ResultSet rs = statement.executeQuery()) {
                assertThat(rs.next()).as("the membership row of " + instanceId).isTrue();
            }
        }
    }

    @Test
    void reservedRowsAreNeverLockHolders() {
        try (StandaloneLocks leases = instance("agree-holders").mode(Mode.LEASE).start();
                LockHandle held = leases.locks.acquire("agree:holder", Duration.ZERO)) {
            List<String> names = leases.locks.holders().stream().map(info -> info.name()).toList();
            assertThat(names).containsExactly("agree:holder");
        }
    }
}
