package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.OneWorker;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.deployment.testing.WaitAssertions;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;
import io.quarkiverse.mysqllock.runtime.engine.PeriodicWork;
import io.quarkiverse.mysqllock.runtime.lease.LeaseEngine;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The LEASE engine's semantics on a real server, with a 3 s ttl renewed every second: short enough to see renewals and
 * expiry within seconds, long enough that a busy machine costs no lease the tests rely on (with 1 s, a renewal about
 * half a second late lost one).
 */
class LeaseEngineTest {

    static final Duration TTL = Duration.ofSeconds(3);
    static final Duration RENEW_INTERVAL = TTL.dividedBy(3);

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(WaitAssertions.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "lease")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.lease.ttl", TTL.toMillis() + "ms");

    @Inject
    LockManager locks;

    @Test
    void aLeaseIsARowOwnedUntilReleased() throws Exception {
        assertThat(locks.mode()).isEqualTo(LockMode.LEASE);
        LockHandle handle = locks.acquire("lease:row", Duration.ZERO);
        assertThat(owner("lease:row"))
                .matches(".+/" + ProcessHandle.current().pid() + "/[0-9a-f]{8}#[0-9a-f-]{13}/" + TTL.toNanos() / 1000);
        assertThat(ServerState.queryLong("SELECT expires_at > UTC_TIMESTAMP(6) FROM mysql_lock WHERE name = 'lease:row'"))
                .isEqualTo(1);
        assertThat(locks.isLocked("lease:row")).isTrue();
        LockInfo info = locks.inspect("lease:row").orElseThrow();
        assertThat(info.mode()).isEqualTo(LockMode.LEASE);
        assertThat(info.fencingToken()).isEqualTo(handle.fencingToken()).isPositive();
        assertThat(LockApp.otherThreadAcquires(locks, "lease:row")).isFalse();

        handle.release();
        assertThat(owner("lease:row")).isNull();
        assertThat(locks.isLocked("lease:row")).isFalse();
        assertThat(LockApp.otherThreadAcquires(locks, "lease:row")).isTrue();
        // nothing of this lease is left in the JVM either
        assertThat(((LeaseEngine) ((MySqlLockManager) locks).engine()).gatesInUse()).isZero();
    }

    @Test
    void waitsTimeOutAndLocalWaitersWakeAtOnce() throws Exception {
        WaitAssertions.timesOutCloseTo(locks, "lease:wait", Duration.ofMillis(300));
        WaitAssertions.waiterWakesPromptly(locks, "lease:handoff", false);
    }

    @Test
    void renewalKeepsALeaseFarPastItsTtl() throws Exception {
        try (LockHandle handle = locks.acquire("lease:renewed", Duration.ZERO);
                StandaloneLocks other = new StandaloneLocks("other", MySqlLockRuntimeConfig.Mode.LEASE)) {
            // Wait for the server's own clock to show the lease renewed beyond two ttls after it was taken: renewed
            // after its first ttl had run out.
            LockApp.await("renewals past 2 ttls", Duration.ofSeconds(60), () -> ServerState.queryLong(
                    "SELECT TIMESTAMPDIFF(MICROSECOND, acquired_at, expires_at) FROM mysql_lock WHERE name = 'lease:renewed'") > TTL
                            .multipliedBy(2).toNanos() / 1000);
            assertThat(handle.isValid()).isTrue();
            assertThat(other.locks.tryAcquire("lease:renewed")).isEmpty();
        }
    }

    @Test
    void aStalledHoldersLeaseIsTakenOverOnceWatchedAndItsHolderIsToldFirst() throws Exception {
        LockHandle handle = locks.acquire("lease:expired", Duration.ZERO);
        long fence = handle.fencingToken();
        CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
        handle.onLost(lost::add);
        // The holder stalls: nothing renews its row any more, as in a long GC pause.
        PeriodicWork renewals = ((MySqlLockManager) locks).engine().periodicWork();
        renewals.pause(true);
        try (StandaloneLocks other = new StandaloneLocks("taker", MySqlLockRuntimeConfig.Mode.LEASE);
                LockHandle taken = other.locks.acquire("lease:expired", TTL.multipliedBy(10))) {
            assertThat(taken.fencingToken()).isGreaterThan(fence);
            // its own clock ended the holder's lease before the taker had watched the row a whole lease; the holder's
            // listener runs on a thread of its own, told a moment after
            assertThat(handle.isValid()).isFalse();
            LockApp.await("the holder to be told", Duration.ofSeconds(30), () -> !lost.isEmpty());
            assertThat(lost.get(0).reason()).isEqualTo(LockLostException.Reason.LEASE_EXPIRED);
            handle.release(); // does not touch the new holder's row
            assertThat(owner("lease:expired")).contains("/taker#");
        } finally {
            renewals.pause(false);
        }
    }

    @Test
    void aRenewingHoldersLeaseIsNotTakenWhateverItsExpiryTimeSays() throws Exception {
        try (LockHandle handle = locks.acquire("lease:renewing", Duration.ZERO);
                StandaloneLocks other = new StandaloneLocks("watcher", MySqlLockRuntimeConfig.Mode.LEASE)) {
            // the row says it ended a second ago (a clock that jumped, a node behind): its holder still renews it
            ServerState.update("UPDATE mysql_lock SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE name = ?",
                    "lease:renewing");
            // watched for two leases: a row seen unchanged for one would be taken
            assertThat(other.locks.tryAcquire("lease:renewing", TTL.multipliedBy(2))).isEmpty();
            assertThat(handle.isValid()).isTrue();
        }
    }

    @Test
    void onlyTheOwnerCanReleaseOrRenew() {
        try (LockHandle handle = locks.acquire("lease:owner", Duration.ZERO)) {
            assertThat(ServerState.update("UPDATE mysql_lock SET owner = NULL, expires_at = '1970-01-01 00:00:00'"
                    + " WHERE name = ? AND owner = ?", "lease:owner", "someone-else#0000")).isZero();
            assertThat(handle.isValid()).isTrue();
            assertThat(owner("lease:owner")).isNotNull();
        }
    }

    @Test
    void fencesStrictlyIncreaseAcrossHoldersAndInstances() throws Exception {
        List<Long> fences = new ArrayList<>();
        try (StandaloneLocks other = new StandaloneLocks("fences", MySqlLockRuntimeConfig.Mode.LEASE)) {
            for (int i = 0; i < 6; i++) {
                LockManager manager = i % 2 == 0 ? locks : other.locks;
                fences.add(Background.supply(() -> {
                    try (LockHandle handle = manager.acquire("lease:fence", Duration.ofSeconds(5))) {
                        return handle.fencingToken();
                    }
                }).get(10, TimeUnit.SECONDS));
            }
        }
        for (int i = 1; i < fences.size(); i++) {
            assertThat(fences.get(i)).isGreaterThan(fences.get(i - 1));
        }
    }

    @Test
    void asynchronousAcquisitionsOnOneWorkerThreadDoNotNest() throws Exception {
        OneWorker.noNestingOnOneWorker(locks, "lease:one-worker");
    }

    @Test
    void theSameThreadNests() throws Exception {
        try (LockHandle outer = locks.acquire("lease:nested", Duration.ZERO)) {
            try (LockHandle inner = locks.acquire("lease:nested", Duration.ZERO)) {
                assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
            }
            assertThat(outer.isValid()).isTrue();
            assertThat(owner("lease:nested")).isNotNull();
            assertThat(LockApp.otherThreadAcquires(locks, "lease:nested")).isFalse();
        }
        assertThat(owner("lease:nested")).isNull();
    }

    @Test
    void aBusyLeaseNamesItsHolder() throws Exception {
        try (StandaloneLocks other = new StandaloneLocks("busy-holder", MySqlLockRuntimeConfig.Mode.LEASE);
                LockHandle held = other.locks.acquire("lease:busy", Duration.ZERO)) {
            LockNotAcquiredException busy = Background.supply(() -> {
                try {
                    locks.acquire("lease:busy", Duration.ofMillis(50));
                    throw new AssertionError("acquired a held lease");
                } catch (LockNotAcquiredException e) {
                    return e;
                }
            }).get();
            assertThat(busy.reason()).isEqualTo(LockNotAcquiredException.Reason.BUSY);
            assertThat(busy.holder()).get().asString().contains("/busy-holder#");
        }
    }

    @Test
    void manyLeasesAreRenewedInOneStatementPerPeriod() throws Exception {
        List<LockHandle> held = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            held.add(locks.acquire("lease:many-" + i, Duration.ZERO));
        }
        try {
            // Three renewal periods, measured by the server's own count of UPDATE statements.
            long before = ServerState.queryLong("SHOW GLOBAL STATUS LIKE 'Com_update'");
            long measuredFrom = System.nanoTime();
            long expiresBefore = ServerState.queryLong("SELECT MIN(UNIX_TIMESTAMP(expires_at)) * 1000 FROM mysql_lock"
                    + " WHERE name LIKE 'lease:many-%'");
            LockApp.await("three renewals of every lease", Duration.ofSeconds(60), () -> ServerState.queryLong(
                    "SELECT MIN(UNIX_TIMESTAMP(expires_at)) * 1000 FROM mysql_lock WHERE name LIKE 'lease:many-%'") >= expiresBefore
                            + RENEW_INTERVAL.multipliedBy(3).toMillis() - 100);
            long updates = ServerState.queryLong("SHOW GLOBAL STATUS LIKE 'Com_update'") - before;
            // One statement per period for all 300, and the membership's renewal: at most three per period that passed
            // while we measured (more of them on a busy machine, whose polls come late); per-lease renewal would be
            // 300 per period.
            long periods = LockApp.millisSince(measuredFrom) / RENEW_INTERVAL.toMillis() + 1;
            assertThat(updates).isBetween(3L, 3 * periods);
            assertThat(held).allMatch(LockHandle::isValid);
        } finally {
            held.forEach(LockHandle::release);
        }
    }

    private static String owner(String name) {
        return ServerState.queryString("SELECT owner FROM mysql_lock WHERE name = ?", name);
    }
}
