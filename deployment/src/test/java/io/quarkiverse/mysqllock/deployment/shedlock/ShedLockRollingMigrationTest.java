package io.quarkiverse.mysqllock.deployment.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.mysql.cj.jdbc.MysqlDataSource;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.shedlock.MySqlLockProvider;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider;

/**
 * A rolling deploy from ShedLock's JDBC provider: old instances still run {@code JdbcLockProvider} on their
 * {@code shedlock} table while new ones run {@code MySqlLockProvider.alsoTaking(locks, thatProvider)}, and each side
 * keeps the other out: a name one side holds is refused to the other, {@code lockAtLeastFor} and {@code extend} hold on
 * both, and threads of an old and two new instances incrementing one counter lose no update. Without the bridge the
 * two sides do not see each other's locks at all (the first test shows what the bridge prevents).
 */
class ShedLockRollingMigrationTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(SharedCounter.class);

    static final String TABLE = "shedlock_rolling";

    @BeforeAll
    static void shedLockTable() {
        // ShedLock's documented MySQL table
        ServerState.update("CREATE TABLE IF NOT EXISTS " + TABLE + " (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3)"
                + " NOT NULL, locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT"
                + " NULL, PRIMARY KEY (name))");
    }

    /** An instance not yet migrated: ShedLock's own JDBC provider on the shared table. */
    static LockProvider oldInstance() {
        TestDatabase db = TestDatabase.shared();
        MysqlDataSource dataSource = new MysqlDataSource();
        dataSource.setUrl(db.jdbcUrl());
        dataSource.setUser(db.user());
        dataSource.setPassword(db.password());
        return new JdbcLockProvider(dataSource, TABLE);
    }

    /** A migrated instance, for each engine: its own lock manager, bridging to the old provider. */
    record NewInstance(StandaloneLocks locks, MySqlLockProvider provider) implements AutoCloseable {
        static NewInstance of(Mode mode, String id) {
            StandaloneLocks locks = StandaloneLocks.Settings.of(id).mode(mode)
                    .table("shed_rolling_" + mode.name().toLowerCase())
                    .start();
            return new NewInstance(locks, MySqlLockProvider.alsoTaking(locks.locks, oldInstance()));
        }

        @Override
        public void close() {
            provider.close();
            locks.close();
        }
    }

    static LockConfiguration config(String name, Duration atMostFor, Duration atLeastFor) {
        return new LockConfiguration(ClockProvider.now(), name, atMostFor, atLeastFor);
    }

    @Test
    void withoutTheBridgeOldAndNewInstancesHoldOneNameAtOnce() {
        try (StandaloneLocks locks = StandaloneLocks.Settings.of("unbridged").mode(Mode.NAMED).table("shed_rolling_named")
                .start();
                MySqlLockProvider unbridged = new MySqlLockProvider(locks.locks)) {
            SimpleLock old = oldInstance().lock(config("rolling:unbridged", Duration.ofSeconds(30), Duration.ZERO))
                    .orElseThrow();
            Optional<SimpleLock> fresh = unbridged.lock(config("rolling:unbridged", Duration.ofSeconds(30), Duration.ZERO));
            assertThat(fresh).as("the new provider alone does not see the old one's lock").isPresent();
            fresh.get().unlock();
            old.unlock();
        }
    }

    @Test
    void namedOldAndNewInstancesExcludeEachOther() {
        excludeEachOther(Mode.NAMED);
    }

    @Test
    void leaseOldAndNewInstancesExcludeEachOther() {
        excludeEachOther(Mode.LEASE);
    }

    private void excludeEachOther(Mode mode) {
        String name = "rolling:exclude-" + mode;
        LockProvider old = oldInstance();
        try (NewInstance fresh = NewInstance.of(mode, "rolling-exclude-" + mode)) {
            SimpleLock oldHolds = old.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
            assertThat(fresh.provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)))
                    .as("a new instance, while an old one holds it").isEmpty();
            assertThat(fresh.locks.locks.isLocked(name)).as("the new engine's lock given back").isFalse();
            oldHolds.unlock();

            SimpleLock freshHolds = fresh.provider.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
            assertThat(old.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)))
                    .as("an old instance, while a new one holds it").isEmpty();
            freshHolds.unlock();
            old.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
        }
    }

    /**
     * A new instance's lockAtLeastFor keeps the old instances out too, and an extend moves both ends. The 1.5 s
     * lockAtLeastFor and the first 1 s lockAtMostFor end on the product's clock: a check or an extension that came after
     * its window may have ended proves nothing, and is made again on a name of its own.
     */
    @Test
    void lockAtLeastForAndExtendHoldOnBothSides() throws Exception {
        LockProvider old = oldInstance();
        try (NewInstance fresh = NewInstance.of(Mode.LEASE, "rolling-least")) {
            LockApp.conclusively("the old side checked during the lockAtLeastFor", attempt -> {
                String name = "rolling:least-" + attempt;
                long start = System.nanoTime();
                fresh.provider.lock(config(name, Duration.ofSeconds(30), Duration.ofMillis(1500))).orElseThrow().unlock();
                Optional<SimpleLock> early = old.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
                early.ifPresent(SimpleLock::unlock);
                if (early.isPresent() && LockApp.millisSince(start) >= 1500) {
                    return false;
                }
                assertThat(early).as("the old side, during the lockAtLeastFor").isEmpty();
                LockApp.await("the old provider to take it after the lockAtLeastFor", Duration.ofSeconds(30), () -> {
                    Optional<SimpleLock> taken = old.lock(config(name, Duration.ofSeconds(30), Duration.ZERO));
                    taken.ifPresent(SimpleLock::unlock);
                    return taken.isPresent();
                });
                assertThat(LockApp.millisSince(start)).isGreaterThanOrEqualTo(1400);
                return true;
            });

            LockApp.conclusively("the extension within the first lockAtMostFor", attempt -> {
                String name = "rolling:extend-" + attempt;
                long start = System.nanoTime();
                SimpleLock lock = fresh.provider.lock(config(name, Duration.ofSeconds(1), Duration.ZERO)).orElseThrow();
                Optional<SimpleLock> extension = lock.extend(Duration.ofSeconds(30), Duration.ZERO);
                if (extension.isEmpty() && LockApp.millisSince(start) >= 1000) {
                    return false;
                }
                SimpleLock extended = extension.orElseThrow();
                assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
                long extendedAt = System.nanoTime();
                LockApp.await("the first lockAtMostFor to pass", Duration.ofSeconds(30),
                        () -> System.nanoTime() - extendedAt > TimeUnit.MILLISECONDS.toNanos(1500));
                assertThat(old.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)))
                        .as("the old side, past the first lockAtMostFor").isEmpty();
                extended.unlock();
                old.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
                return true;
            });
        }
    }

    /** Threads of one old and two new instances (one per engine table user) increment one counter: no update lost. */
    @Test
    void threadsOfOldAndNewInstancesIncrementingOneCounterLoseNoUpdate() throws Exception {
        SharedCounter.reset("rolling");
        LockProvider old = oldInstance();
        AtomicInteger byOld = new AtomicInteger();
        AtomicInteger byNew = new AtomicInteger();
        try (NewInstance one = NewInstance.of(Mode.LEASE, "rolling-counter-1");
                NewInstance two = NewInstance.of(Mode.LEASE, "rolling-counter-2")) {
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                LockProvider provider = t % 3 == 0 ? old : t % 3 == 1 ? one.provider : two.provider;
                AtomicInteger by = t % 3 == 0 ? byOld : byNew;
                threads.add(
                        Background.run(() -> SharedCounter.incrementUnderLock(provider, "rolling:counter", "rolling", 30, by)));
            }
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(180, TimeUnit.SECONDS);
        }
        assertThat(byOld.get()).isEqualTo(60);
        assertThat(byNew.get()).isEqualTo(120);
        assertThat(SharedCounter.value("rolling")).isEqualTo(180);
    }

    @Test
    void aBridgeToNothingOrToItselfIsRefused() {
        try (StandaloneLocks locks = StandaloneLocks.Settings.of("rolling-bad").mode(Mode.NAMED).table("shed_rolling_named")
                .start()) {
            assertThatThrownBy(() -> MySqlLockProvider.alsoTaking(locks.locks, null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("new MySqlLockProvider(locks)");
            assertThatThrownBy(() -> MySqlLockProvider.alsoTaking(locks.locks, new MySqlLockProvider(locks.locks)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not another MySqlLockProvider");
        }
    }
}
