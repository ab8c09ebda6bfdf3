package io.quarkiverse.mysqllock.deployment.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A metrics registry that throws (a Prometheus registry refusing a meter whose tags clash with one the application
 * registered, a registry closed early) changes nothing about the locks: acquisitions are granted and released, the
 * keepalive and the renewals keep running, and every loss is still reported.
 */
class FailingMetricsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    /** Fails every report, and counts them. */
    static final class ThrowingMetrics implements LockMetrics {
        final AtomicInteger calls = new AtomicInteger();

        private void fail() {
            calls.incrementAndGet();
            throw new IllegalArgumentException("Prometheus requires that all meters with the same name have the same"
                    + " set of tag keys");
        }

        @Override
        public void acquisition(LockMode engine, Outcome outcome, long waitNanos) {
            fail();
        }

        @Override
        public void held(LockMode engine, long holdNanos) {
            fail();
        }

        @Override
        public void lost(LockMode engine, LockLostException.Reason cause) {
            fail();
        }

        @Override
        public void renewed(int leases) {
            fail();
        }

        @Override
        public void engineChosen(LockMode engine, IntSupplier locksHeld, IntSupplier pinnedConnections) {
            fail();
        }
    }

    @Test
    void aNamedLockIsGrantedReleasedAndItsLossReported() {
        ThrowingMetrics metrics = new ThrowingMetrics();
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("failing-metrics-named").mode(Mode.NAMED)
                .keepalive(Duration.ofMillis(500)).metrics(metrics).start()) {
            assertThat(instance.locks.mode()).isEqualTo(LockMode.NAMED);
            LockHandle first = instance.locks.acquire("metrics:named", Duration.ZERO);
            first.release();
            assertThat(ServerState.holder("metrics:named")).isEmpty();
            assertThat(instance.locks.held()).isEmpty();

            LockHandle handle = instance.locks.acquire("metrics:named", Duration.ZERO);
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            handle.onLost(lost::add);
            TestDatabase.shared().kill(ServerState.holder("metrics:named").orElseThrow());
            // the keepalive finds it, not a release
            LockApp.await("the keepalive to report the loss", Duration.ofSeconds(30), () -> !lost.isEmpty());
            assertThat(lost).hasSize(1);
            assertThat(handle.isValid()).isFalse();
            handle.release();
            assertThat(metrics.calls.get()).as("the metrics were called, and failed").isPositive();
        }
    }

    /**
     * A 3 s ttl: renewals within seconds, and a busy machine costs no lease (with 1 s, a renewal about half a second
     * late lost it). A renewal thread the failing metrics killed loses the lease after one ttl, whatever its length.
     */
    @Test
    void leasesAreRenewedAndTheirLossReported() throws Exception {
        ThrowingMetrics metrics = new ThrowingMetrics();
        Duration ttl = Duration.ofSeconds(3);
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("failing-metrics-lease").mode(Mode.LEASE)
                .table("failing_metrics_lock").ttl(ttl)
                .metrics(metrics).start();
                StandaloneLocks other = StandaloneLocks.Settings.of("failing-metrics-other").mode(Mode.LEASE)
                        .table("failing_metrics_lock").ttl(ttl)
                        .start()) {
            assertThat(instance.locks.mode()).isEqualTo(LockMode.LEASE);
            LockHandle handle = instance.locks.acquire("metrics:lease", Duration.ZERO);
            CopyOnWriteArrayList<LockLostException> lost = new CopyOnWriteArrayList<>();
            handle.onLost(lost::add);
            // two ttls: only renewals keep it
            long until = System.nanoTime() + ttl.multipliedBy(2).toNanos();
            while (System.nanoTime() - until < 0) {
                assertThat(handle.isValid()).as("the lease, renewed while the metrics fail").isTrue();
                assertThat(other.locks.tryAcquire("metrics:lease")).isEmpty();
                Thread.sleep(100);
            }
            assertThat(lost).isEmpty();

            assertThat(other.locks.forceRelease("metrics:lease")).isTrue();
            LockApp.await("the renewal to report the lease lost", Duration.ofSeconds(30), () -> !lost.isEmpty());
            assertThat(lost).hasSize(1);
            handle.release();
            assertThat(instance.locks.held()).isEmpty();
            assertThat(metrics.calls.get()).as("the metrics were called, and failed").isPositive();
        }
    }
}
