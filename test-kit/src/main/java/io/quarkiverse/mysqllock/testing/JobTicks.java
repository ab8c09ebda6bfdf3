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
 * without waiting for the clock, as this instance ({@link #fire}) or as another instance of the fleet ({@link #fireAs}):
 * a tick is claimed and run as the scheduler's fire of it is, so the test sees what the fleet would (a tick that runs
 * once, a paused job's skip, the catch-up after a gap, a tick queued behind a run that lasts) and asserts on
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
     * @return how the run ended (a paused job's tick: {@code SKIPPED_PAUSED}; a tick queued behind a run that lasts:
     *         {@code QUEUED}); null when the tick was not this
     *         instance's to run: claimed before, or too old to run, or the job is disabled
     * @throws IllegalArgumentException when the application has no such job, or it cannot be fired so
     * @throws AssertionError when the run and its catch-ups did not end within a minute
     */
    public RunOutcome fire(String job, Instant scheduledAt) {
        return fired(job, scheduledAt,
                new JobTick(scheduledAt.toEpochMilli(), RunKind.SCHEDULED, new CompletableFuture<>()));
    }

    /**
     * Fires the tick of {@code job} scheduled at {@code scheduledAt} as another instance of the fleet fires it: claimed
     * in the jobs table, and recorded in the history as that instance's run, which succeeded at once. The job's method
     * does not run here, and its lock is not taken. What that instance's claim finds, it finds: a tick claimed before
     * is not its to run, a paused job's tick is its skip, and the ticks missed before it are caught up, here, once it
     * ended, as they would be there. Returns once the catch-ups it launched ended too.
     *
     * <pre>
     * ticks.fireAs("replica-2", "cron:nightly-report", Instant.parse("2026-03-01T02:00:00Z"));
     * assertThat(ticks.fire("cron:nightly-report", Instant.parse("2026-03-01T02:00:00Z"))).isNull(); // ran there
     * </pre>
     *
     * @param instance the other instance's name, as the history names it
     * @return {@code SUCCEEDED}; a paused job's tick: {@code SKIPPED_PAUSED}; null when the tick was not that
     *         instance's to run: claimed before, or too old to run, or the job is disabled
     * @throws IllegalArgumentException when the application has no such job, or it cannot be fired so
     */
    public RunOutcome fireAs(String instance, String job, Instant scheduledAt) {
        if (instance == null || instance.isBlank()) {
            throw new IllegalArgumentException("Name the other instance that fires the tick of job '" + job + "'");
        }
        return fired(job, scheduledAt, JobTick.elsewhere(scheduledAt.toEpochMilli(), instance));
    }

    private RunOutcome fired(String job, Instant scheduledAt, JobTick tick) {
        JobLauncher launcher = Arc.container().instance(JobLauncher.class).get();
        if (launcher == null) {
            throw new IllegalArgumentException("This application has no scheduled job to fire, so not '" + job
                    + "': a job is a @Locked method with a ScheduledExecution parameter");
        }
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
