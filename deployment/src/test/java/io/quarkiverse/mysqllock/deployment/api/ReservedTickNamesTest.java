package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;
import io.smallrye.mutiny.Uni;

/**
 * A scheduled {@code @Locked} job records its ticks in the lock table row {@code tick@<its lock>} (issue 44, item 6). A
 * lock named so shared that row: on LEASE its takes and renewals and the tick claims overwrote each other's owner and
 * fence (late ticks skipped, holders told of losses that did not happen); on NAMED its fencing tokens came from the
 * row. Names that begin with {@code tick@} are refused, with one message, wherever a lock is named, while the job's own
 * tick claims go on.
 */
class ReservedTickNamesTest {

    private static final String JOB = "nightly:report";
    /** The name of the job's tick row. */
    private static final String TICK_ROW = "tick@" + JOB;

    private static StandaloneLocks instance(String table) {
        return StandaloneLocks.Settings.of("reserved-ticks").mode(Mode.LEASE).table(table).start();
    }

    @Test
    void everyWayOfNamingALockRefusesTheTickRowPrefix() {
        try (StandaloneLocks instance = instance("reserved_refused")) {
            MySqlLockManager locks = instance.locks;
            Map<String, ThrowingCallable> namings = new LinkedHashMap<>();
            namings.put("acquire", () -> locks.acquire(TICK_ROW));
            namings.put("acquire(wait)", () -> locks.acquire(TICK_ROW, Duration.ZERO));
            namings.put("acquire(options)", () -> locks.acquire(TICK_ROW, LockOptions.defaults()));
            namings.put("tryAcquire", () -> locks.tryAcquire(TICK_ROW));
            namings.put("tryAcquire(wait)", () -> locks.tryAcquire(TICK_ROW, Duration.ZERO));
            namings.put("tryAcquire(options)", () -> locks.tryAcquire(TICK_ROW, LockOptions.defaults()));
            namings.put("withLock(callable)", () -> locks.withLock(TICK_ROW, Duration.ZERO, () -> "ran"));
            namings.put("withLock(runnable)", () -> locks.withLock(TICK_ROW, Duration.ZERO, (Runnable) () -> {
            }));
            namings.put("tryWithLock", () -> locks.tryWithLock(TICK_ROW, () -> "ran"));
            namings.put("tryWithLock(wait)", () -> locks.tryWithLock(TICK_ROW, Duration.ZERO, () -> "ran"));
            namings.put("acquireAsync(wait)", () -> locks.acquireAsync(TICK_ROW, Duration.ZERO));
            namings.put("acquireAsync(options)", () -> locks.acquireAsync(TICK_ROW, LockOptions.defaults()));
            namings.put("withLockAsync",
                    () -> locks.withLockAsync(TICK_ROW, Duration.ZERO, () -> Uni.createFrom().item("ran")));
            namings.put("acquireAll", () -> locks.acquireAll(List.of("reserved:other", TICK_ROW), Duration.ZERO));
            namings.put("asLock", () -> locks.asLock(TICK_ROW));
            namings.put("semaphore", () -> locks.semaphore(TICK_ROW, 2));
            namings.put("readWriteLock", () -> locks.readWriteLock(TICK_ROW));
            namings.put("election", () -> locks.election(TICK_ROW));
            namings.put("isLocked", () -> locks.isLocked(TICK_ROW));
            namings.put("inspect", () -> locks.inspect(TICK_ROW));
            namings.put("forceRelease", () -> locks.forceRelease(TICK_ROW));
            namings.put("runOnce", () -> locks.runOnce(TICK_ROW, () -> {
            }));
            namings.put("acquireForTransaction", () -> locks.acquireForTransaction(TICK_ROW, Duration.ZERO));
            // a @Locked method whose name is built from its arguments at run time
            namings.put("@Locked", () -> locks.acquireForMethod(TICK_ROW, LockOptions.defaults(), WhenBusy.THROW, null));
            namings.put("@Locked async", () -> locks.acquireForMethodAsync(TICK_ROW, LockOptions.defaults(), null, null));
            namings.put("serverName (test kit)", () -> locks.serverName(TICK_ROW));
            for (Map.Entry<String, ThrowingCallable> naming : namings.entrySet()) {
                assertThatThrownBy(naming.getValue()).as(naming.getKey()).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageStartingWith("Lock name 'tick@nightly:report' is reserved: names beginning with"
                                + " 'tick@' are the lock table rows where scheduled @Locked methods record their ticks");
            }
            assertThat(ServerState.queryLong("SELECT COUNT(*) FROM reserved_refused WHERE name = ?", TICK_ROW))
                    .as("nothing reached the table").isZero();
        }
    }

    @Test
    void theJobsOwnTicksAreStillClaimedAndOtherNamesStillWork() {
        try (StandaloneLocks instance = instance("reserved_claimed")) {
            MySqlLockManager locks = instance.locks;
            ControlledHandle first = locks.acquireForMethod(JOB, LockOptions.defaults(), WhenBusy.THROW, 10_000L);
            assertThat(first).as("tick 10000 runs").isNotNull();
            first.release();
            assertThat(locks.acquireForMethod(JOB, LockOptions.defaults(), WhenBusy.THROW, 10_000L)).as("once")
                    .isNull();
            ControlledHandle next = locks.acquireForMethod(JOB, LockOptions.defaults(), WhenBusy.THROW, 11_000L);
            assertThat(next).as("tick 11000 runs").isNotNull();
            next.release();
            assertThat(ServerState.queryLong("SELECT fence FROM reserved_claimed WHERE name = ?", TICK_ROW))
                    .as("the job's tick row keeps its latest tick").isEqualTo(11_000);

            // only the exact prefix is reserved: these are no tick row's server name
            for (String name : List.of("Tick@" + JOB, "report:tick@1", " tick@" + JOB)) {
                try (LockHandle held = locks.acquire(name, Duration.ZERO)) {
                    assertThat(held.isValid()).as(name).isTrue();
                    assertThat(locks.serverName(name)).as(name).isNotEqualTo(TICK_ROW);
                }
            }
        }
    }
}
