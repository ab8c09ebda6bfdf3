package io.quarkiverse.mysqllock.deployment.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics.MethodOutcome;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;
import io.quarkiverse.mysqllock.runtime.jobs.JobRunHandle;
import io.quarkiverse.mysqllock.runtime.metrics.MicrometerLockMetrics;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The metrics of scheduled jobs: {@code mysql.lock.job.run}, a timer per job and outcome, and
 * {@code mysql.lock.job.since.success}, a gauge per job this instance fires, read from the jobs table off the scrape.
 */
class JobMetricsTest {

    @RegisterExtension
    // NAMED, as the standalone instance below on the same lock table: an engine of its own whatever an earlier test class
    // left the fleet on (its default datasource would follow a LEASE fleet, and refuse the standalone NAMED instance)
    static final QuarkusUnitTest app = LockApp.app().overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "named");

    @Test
    void aJobsRunsAreTimedByOutcomeAndItsSilenceIsAGauge() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("job-metrics").mode(Mode.NAMED)
                .metrics(new MicrometerLockMetrics(registry, "jobs")).start()) {
            ControlledHandle first = instance.locks.acquireForMethod("metrics:job", LockOptions.waitingUpTo(
                    Duration.ZERO), WhenBusy.NOTHING, 1_000L);
            JobRunHandle.ended(first, MethodOutcome.RAN, null);
            first.release();
            ControlledHandle second = instance.locks.acquireForMethod("metrics:job", LockOptions.waitingUpTo(
                    Duration.ZERO), WhenBusy.NOTHING, 2_000L);
            JobRunHandle.ended(second, MethodOutcome.FAILED, new IllegalStateException("failed"));
            second.release();

            assertThat(registry.get("mysql.lock.job.run").tag("job", "metrics:job").tag("outcome", "succeeded")
                    .timer().count()).isEqualTo(1);
            assertThat(registry.get("mysql.lock.job.run").tag("job", "metrics:job").tag("outcome", "failed")
                    .timer().count()).isEqualTo(1);
            LockApp.await("the gauge to read the job's last success", Duration.ofSeconds(30), () -> {
                double seconds = registry.get("mysql.lock.job.since.success").tag("job", "metrics:job").gauge()
                        .value();
                return !Double.isNaN(seconds);
            });
            assertThat(registry.get("mysql.lock.job.since.success").tag("job", "metrics:job").tag("datasource", "jobs")
                    .gauge().value()).as("seconds since the first run succeeded").isBetween(0.0, 600.0);
        }
        assertThat(registry.find("mysql.lock.job.since.success").gauge()).as("removed with its manager").isNull();
    }
}
