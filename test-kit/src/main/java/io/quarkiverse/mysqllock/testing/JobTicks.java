package io.quarkiverse.mysqllock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.jobs.JobLauncher;
import io.quarkiverse.mysqllock.runtime.jobs.JobTick;
import io.quarkus.arc.Arc;

/**
 * Fires the ticks of an application's scheduled jobs in its own tests, at the scheduled times the test chooses,
 * without waiting for the clock: a tick is claimed and run as the scheduler's fire of it is, so the test sees what the
 * fleet would (a tick that runs once, a paused job's skip, the catch-up after a gap) and asserts on
 * {@code LockManager.jobs().history(...)}. Inject it in a {@code @QuarkusTest} ({@code @Inject JobTicks ticks}); it
 * fires the jobs of the default datasource's {@link LockManager}, {@link #on(LockManager)} another's. Available in tests
 * only.
 *
 * <pre>
 * ticks.fire("cron:nightly-report", Instant.parse("2026-03-01T02:00:00Z"));
 * ticks.fire("cron:nightly-report", Instant.parse("2026-03-04T02:00:00Z")); // every replica was down in between
 * </pre>
 */
@Singleton
public class JobTicks {

    /** How long a fired tick may take to end, with what it launched, before the test fails. */
    private static final Duration ENDS_WITHIN = Duration.ofSeconds(60);

    private final MySqlLockManager locks;

    @Inject
    public JobTicks(LockManager locks) {
        this.locks = LockFaults.manager(locks);
    }

    /** The jobs of another datasource's lock manager. */
    public JobTicks on(LockManager other) {
        return new JobTicks(other);
    }

    /**
     * Fires the tick of {@code job} (its lock's name) scheduled at {@code scheduledAt}, as this instance's scheduler
     * fires it: claimed in the jobs table, then run here through the job's {@code @Locked} method (its lock, its
     * history), on a worker thread, unless it was claimed before. Returns once the run ended, and the catch-ups it
     * launched ended too. For an {@code every} job, the tick is the start of the interval {@code scheduledAt} falls in,
     * as for the scheduler's fires. The job's method must take its {@code ScheduledExecution} and nothing else.
     *
     * @return how the run ended (a paused job's tick: {@code SKIPPED_PAUSED}); null when the tick was not this
     *         instance's to run: claimed before, or too old to run, or the job is disabled
     * @throws IllegalArgumentException when the application has no such job, or it cannot be fired so
     * @throws AssertionError when the run and its catch-ups did not end within a minute
     */
    public RunOutcome fire(String job, Instant scheduledAt) {
        JobLauncher launcher = Arc.container().instance(JobLauncher.class).get();
        if (launcher == null) {
            throw new IllegalArgumentException("This application has no scheduled job to fire, so not '" + job
                    + "': a job is a @Locked method with a ScheduledExecution parameter");
        }
        JobTick tick = new JobTick(scheduledAt.toEpochMilli(), RunKind.SCHEDULED, new CompletableFuture<>());
        launcher.launch(locks.dataSourceName(), job, tick);
        try {
            tick.settled().get(ENDS_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
            return tick.outcome().get();
        } catch (TimeoutException e) {
            throw new AssertionError("The tick " + scheduledAt + " of job '" + job + "', with the catch-ups it"
                    + " launched, did not end within " + ENDS_WITHIN, e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure
                    : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while the tick of job '" + job + "' ran", e);
        }
    }
}
