package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code purgeUnused} removes the rows of names nobody used for a while, keeps every row in use, and never lets a
 * fence go back: a name that comes back after its row was removed gets fences above every one it had.
 */
class PurgeUnusedTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    /** Makes a row look last used two hours ago. */
    private static void age(String table, String name) {
        ServerState.update("UPDATE " + table + " SET acquired_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR WHERE name = ?", name);
    }

    private static long rows(String table, String name) {
        return ServerState.queryLong("SELECT COUNT(*) FROM " + table + " WHERE name = ?", name);
    }

    @Test
    void unusedLeaseRowsGoAndTheirNamesComeBackWithHigherFences() {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("purge-lease").mode(Mode.LEASE)
                .table("purge_lease_lock").start()) {
            long fence = 0;
            for (int i = 0; i < 5; i++) {
                try (LockHandle handle = instance.locks.acquire("purge:comes-back", Duration.ZERO)) {
                    fence = handle.fencingToken();
                }
            }
            instance.locks.acquire("purge:recent", Duration.ZERO).release();
            LockHandle held = instance.locks.acquire("purge:held", Duration.ZERO);
            instance.locks.runOnce("purge:once", () -> {
            });
            for (String name : List.of("purge:comes-back", "purge:held", "purge:once")) {
                age("purge_lease_lock", name);
            }

            assertThat(instance.locks.purgeUnused(Duration.ofHours(1))).isEqualTo(1);
            assertThat(rows("purge_lease_lock", "purge:comes-back")).isZero();
            assertThat(rows("purge_lease_lock", "purge:recent")).as("used within the hour").isOne();
            assertThat(rows("purge_lease_lock", "purge:held")).as("an unexpired lease").isOne();
            assertThat(rows("purge_lease_lock", "purge:once")).as("a run-once completion").isOne();
            assertThat(instance.locks.runOnce("purge:once", () -> {
            })).as("the completion still counts").isFalse();
            assertThat(held.isValid()).isTrue();

            try (LockHandle again = instance.locks.acquire("purge:comes-back", Duration.ZERO)) {
                assertThat(again.fencingToken()).isGreaterThan(fence);
            }
            held.release();
        }
    }

    @Test
    void namedFencingTokensKeepGrowingAcrossAPurge() {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("purge-named").mode(Mode.NAMED)
                .table("purge_named_lock").start()) {
            long fence;
            try (LockHandle handle = instance.locks.acquire("purge:named", Duration.ZERO)) {
                handle.fencingToken();
            }
            try (LockHandle handle = instance.locks.acquire("purge:named", Duration.ZERO)) {
                fence = handle.fencingToken();
            }
            age("purge_named_lock", "purge:named");
            assertThat(instance.locks.purgeUnused(Duration.ofHours(1))).isEqualTo(1);
            assertThat(rows("purge_named_lock", "purge:named")).isZero();
            try (LockHandle handle = instance.locks.acquire("purge:named", Duration.ZERO)) {
                assertThat(handle.fencingToken()).isGreaterThan(fence);
            }
        }
    }

    @Test
    void purgesRacingTakesNeverLetAFenceGoBack() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("purge-race").mode(Mode.LEASE)
                .table("purge_race_lock").start()) {
            int names = 8;
            AtomicLong[] last = new AtomicLong[names];
            for (int i = 0; i < names; i++) {
                last[i] = new AtomicLong();
            }
            AtomicInteger regressions = new AtomicInteger();
            AtomicLong purged = new AtomicLong();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (int t = 0; t < names; t++) {
                int name = t;
                threads.add(Background.run(() -> {
                    while (System.nanoTime() - end < 0) {
                        try (LockHandle handle = instance.locks.acquire("race:" + name, Duration.ofSeconds(5))) {
                            long fence = handle.fencingToken();
                            if (fence <= last[name].getAndSet(fence)) {
                                regressions.incrementAndGet();
                            }
                        }
                    }
                }));
            }
            // every row looks old the moment it is written: each purge, 50 a second, removes whatever is not held
            threads.add(Background.run(() -> {
                while (System.nanoTime() - end < 0) {
                    ServerState.update("UPDATE purge_race_lock SET acquired_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR"
                            + " WHERE name LIKE 'race:%'");
                    purged.addAndGet(instance.locks.purgeUnused(Duration.ofHours(1)));
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                }
            }));
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertThat(purged.get()).as("rows removed while in use around them").isPositive();
            assertThat(regressions.get()).as("fences that did not grow").isZero();
        }
    }

    /**
     * A purge waits for no row lock: a row held by a transaction is skipped (it is in use), the others are removed, and
     * the purge returns at once. Before, it waited for the row up to innodb_lock_wait_timeout while holding the row locks
     * of the rest of its batch (every renewal of those names failed meanwhile), then failed.
     */
    @Test
    void aPurgeWaitsForNoRowLock() throws Exception {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("purge-locked").mode(Mode.LEASE)
                .table("purge_locked_lock").start()) {
            for (String name : List.of("purge:locked", "purge:free")) {
                instance.locks.acquire(name, Duration.ZERO).release();
                age("purge_locked_lock", name);
            }
            try (Connection holder = TestDatabase.shared().connect()) {
                holder.setAutoCommit(false);
                try (PreparedStatement lock = holder
                        .prepareStatement("SELECT fence FROM purge_locked_lock WHERE name = 'purge:locked' FOR UPDATE")) {
                    lock.executeQuery().close();
                }
                long removed = Background.supply(() -> instance.locks.purgeUnused(Duration.ofHours(1)))
                        .get(10, TimeUnit.SECONDS);
                assertThat(removed).isOne();
                assertThat(rows("purge_locked_lock", "purge:free")).isZero();
                assertThat(rows("purge_locked_lock", "purge:locked")).as("locked by a transaction").isOne();
                holder.rollback();
            }
        }
    }

    @Test
    void aPurgeNeedsAPositiveDuration() {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("purge-bad").mode(Mode.LEASE)
                .table("purge_bad_lock").start()) {
            assertThatThrownBy(() -> instance.locks.purgeUnused(Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
            assertThatThrownBy(() -> instance.locks.purgeUnused(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> instance.locks.purgeUnused(null)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
