package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/** The admin API: this instance's locks, every holder the server knows, and force-release of a lease. */
class AdminApiTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    static Map<String, LockInfo> byName(List<LockInfo> infos) {
        return infos.stream().collect(Collectors.toMap(LockInfo::name, Function.identity()));
    }

    @Test
    void heldListsThisInstancesLocksOnly() throws Exception {
        try (StandaloneLocks other = new StandaloneLocks("admin-other", Mode.NAMED);
                LockHandle mine = locks.acquire("admin:held:mine", Duration.ZERO);
                LockHandle theirs = other.locks.acquire("admin:held:theirs", Duration.ZERO)) {
            assertThat(locks.held()).extracting(LockInfo::name).contains("admin:held:mine")
                    .doesNotContain("admin:held:theirs");
            assertThat(other.locks.held()).extracting(LockInfo::name).containsExactly("admin:held:theirs");
        }
        assertThat(locks.held()).extracting(LockInfo::name).doesNotContain("admin:held:mine");
    }

    @Test
    void namedHoldersWithoutServerLockTablesAreTheFencedNamesInUse() throws Exception {
        // The embedded MariaDB has neither performance_schema nor the metadata_lock_info plugin: the names the lock
        // table knows (those given a fencing token) are each checked with IS_USED_LOCK.
        try (StandaloneLocks other = new StandaloneLocks("admin-named", Mode.NAMED);
                LockHandle mine = locks.acquire("admin:named:mine", Duration.ZERO);
                LockHandle theirs = other.locks.acquire("admin:named:theirs", Duration.ZERO)) {
            mine.fencingToken();
            long token = theirs.fencingToken();
            long connection = ServerState.holder("admin:named:theirs").orElseThrow();

            Map<String, LockInfo> holders = byName(locks.holders());

            assertThat(holders.get("admin:named:theirs").holder()).isEqualTo("server connection " + connection);
            assertThat(holders.get("admin:named:mine").holder()).contains("thread '" + Thread.currentThread().getName());
            assertThat(holders.get("admin:named:mine").mode()).isEqualTo(LockMode.NAMED);
            assertThat(token).isPositive();
        }
        assertThat(byName(locks.holders())).doesNotContainKeys("admin:named:mine", "admin:named:theirs");
    }

    @Test
    void namedHoldersFromPerformanceSchemaIncludeUnfencedLocks() throws Exception {
        // MySQL's path: performance_schema.metadata_locks, here on a MariaDB started with the instrument enabled.
        TestDatabase instrumented = TestDatabase.startEmbedded("--performance-schema=ON",
                "--performance-schema-instrument=wait/lock/metadata/sql/mdl=ON");
        try (StandaloneLocks one = new StandaloneLocks(instrumented, "ps-one", Mode.NAMED, Optional.empty());
                StandaloneLocks two = new StandaloneLocks(instrumented, "ps-two", Mode.NAMED, Optional.empty());
                LockHandle unfenced = two.locks.acquire("admin:ps:unfenced", Duration.ZERO)) {
            Map<String, LockInfo> holders = byName(one.locks.holders());
            assertThat(holders).containsKey("admin:ps:unfenced");
            assertThat(holders.get("admin:ps:unfenced").holder()).startsWith("server connection ");
        } finally {
            instrumented.stop();
        }
    }

    @Test
    void leaseHoldersAndForceRelease() throws Exception {
        // a fleet of its own: this application's NAMED fleet uses the default lock table
        try (StandaloneLocks admin = leases("lease-admin"); StandaloneLocks holder = leases("lease-holder")) {
            LockHandle held = holder.locks.acquire("admin:lease", Duration.ZERO);
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            held.onLost(lost::add);

            LockInfo info = byName(admin.locks.holders()).get("admin:lease");
            assertThat(info.holder()).contains("lease-holder");
            assertThat(info.fencingToken()).isEqualTo(held.fencingToken());
            assertThat(admin.locks.tryAcquire("admin:lease")).isEmpty();

            assertThat(admin.locks.forceRelease("admin:lease")).isTrue();
            assertThat(admin.locks.forceRelease("admin:lease")).as("already free").isFalse();

            // The next holder gets in at once, with a greater token; the former holder hears it at its next renewal.
            LockHandle next = admin.locks.tryAcquire("admin:lease").orElseThrow();
            assertThat(next.fencingToken()).isGreaterThan(info.fencingToken());
            LockApp.await("the former holder to be told", Duration.ofSeconds(10), () -> !lost.isEmpty());
            assertThat(lost.get(0).reason()).isEqualTo(LockLostException.Reason.NOT_HELD);
            assertThat(held.isValid()).isFalse();
            held.release();
            assertThat(byName(admin.locks.holders()).get("admin:lease").holder()).contains("lease-admin");
            next.release();
            assertThat(byName(admin.locks.holders())).doesNotContainKey("admin:lease");
        }
    }

    @Test
    void forceReleaseOfOwnLeaseTellsTheHolderAtOnce() {
        try (StandaloneLocks instance = leases("lease-self")) {
            LockHandle held = instance.locks.acquire("admin:lease:self", Duration.ZERO);
            assertThat(instance.locks.forceRelease("admin:lease:self")).isTrue();
            assertThat(held.isValid()).isFalse();
            held.release();
        }
    }

    /**
     * A 6 s ttl: on a loaded machine a 2 s lease can expire unrenewed before the force-release, and its holder then
     * hears LEASE_EXPIRED, not what the force-release does (seen beside a benchmark run).
     */
    private static StandaloneLocks leases(String id) {
        return StandaloneLocks.Settings.of(id).mode(Mode.LEASE).table("admin_lease_lock").ttl(Duration.ofSeconds(6))
                .start();
    }

    @Test
    void forceReleaseIsRefusedOnTheNamedEngine() throws Exception {
        try (LockHandle held = locks.acquire("admin:named:force", Duration.ZERO)) {
            assertThatThrownBy(() -> locks.forceRelease("admin:named:force"))
                    .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("KILL");
            assertThat(held.isValid()).isTrue();
        }
    }
}
