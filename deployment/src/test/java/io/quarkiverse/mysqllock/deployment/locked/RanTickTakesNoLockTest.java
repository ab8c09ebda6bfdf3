package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * A scheduled tick that already ran on some instance takes no lock: an instance whose trigger fires late (one tick
 * behind, as a scheduler that fell behind once stays) learns it from the lock table without the lock. Before, it took
 * the lock to claim the tick, and the other instances, firing the next tick at that moment, found the lock busy and
 * skipped a tick nobody ran ({@code ScheduledJobAcrossProcessesIT} missed ticks that way).
 */
class RanTickTakesNoLockTest {

    @BeforeAll
    static void outsideAnyEventLoop() {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
    }

    @Test
    void aTickThatRanTakesNoLock() {
        AtomicInteger acquisitions = new AtomicInteger();
        LockMetrics counting = new LockMetrics() {
            @Override
            public void acquisition(LockMode engine, Outcome outcome, long waitNanos) {
                acquisitions.incrementAndGet();
            }
        };
        for (Mode mode : new Mode[] { Mode.NAMED, Mode.LEASE }) {
            try (StandaloneLocks instance = StandaloneLocks.Settings.of("ran-tick-" + mode).mode(mode).metrics(counting)
                    .table("ran_tick_" + mode.name().toLowerCase()).start()) {
                String job = "ran-tick:" + mode;
                ControlledHandle first = instance.locks.acquireForMethod(job, LockOptions.waitingUpTo(Duration.ZERO),
                        WhenBusy.NOTHING, 10_000L);
                assertThat(first).as("tick 10 000 runs").isNotNull();
                first.release();
                acquisitions.set(0);

                assertThat(
                        instance.locks.acquireForMethod(job, LockOptions.waitingUpTo(Duration.ZERO), WhenBusy.NOTHING, 10_000L))
                        .as("tick 10 000 again")
                        .isNull();
                assertThat(
                        instance.locks.acquireForMethod(job, LockOptions.waitingUpTo(Duration.ZERO), WhenBusy.NOTHING, 7_000L))
                        .as("a tick older than the late-tick window")
                        .isNull();
                assertThat(acquisitions.get()).as("%s: acquisitions for ticks that ran", mode).isZero();

                ControlledHandle next = instance.locks.acquireForMethod(job, LockOptions.waitingUpTo(Duration.ZERO),
                        WhenBusy.NOTHING, 10_001L);
                assertThat(next).as("the next tick runs").isNotNull();
                next.release();
            }
        }
    }
}
