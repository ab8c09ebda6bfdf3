package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.jobs.JobLauncher;
import io.quarkiverse.mysqllock.runtime.jobs.JobTick;
import io.quarkus.arc.Arc;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code overlap=queue-one}: a tick that fires while a run of its job lasts is recorded {@code QUEUED}, and one run
 * follows once that run has ended and released its lock, for the latest tick queued meanwhile; {@code overlap=skip}
 * (the default) records it {@code SKIPPED_BUSY} and runs nothing after. Ticks are fired here as the scheduler fires
 * them, each on a worker thread, so that a run that lasts holds the job's lock on its own thread. Run on each engine by
 * the classes that extend it, each with its own application ({@link #app}).
 */
abstract class QueueOneContract {

    private static final long HOUR = Duration.ofHours(1).toMillis();
    /** A tick of every hourly job, far from now (their schedules do not fire in the test). */
    private static final long BASE = 600_000 * HOUR;
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    /** The test application, with the jobs' settings, as each engine's class completes it. */
    static QuarkusUnitTest app(QuarkusUnitTest app) {
        return app
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"queue:one\".overlap", "queue-one")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"queue:fail\".overlap", "queue-one")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"queue:paused\".overlap", "queue-one")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"queue:hold\".overlap", "queue-one")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"queue:newer\".overlap", "queue-one");
    }

    /** Forgets what an earlier test class of the same server left of these jobs: their rows and their history. */
    @BeforeAll
    static void forgetJobs() {
        ServerState.forgetJobs("queue:%");
        Job.runs.clear();
    }

    @Inject
    LockManager locks;

    @Test
    void ticksThatFireWhileARunLastsQueueOneRunForTheLatestOfThem() throws Exception {
        String job = "queue:one";
        CompletableFuture<RunOutcome> first = holding(job, BASE);
        assertThat(fire(job, BASE + HOUR)).as("fired while the first run lasts").isEqualTo(RunOutcome.QUEUED);
        assertThat(fire(job, BASE + 2 * HOUR)).isEqualTo(RunOutcome.QUEUED);
        assertThat(Job.runs(job)).as("nothing runs beside the run that lasts")
                .containsExactly(new Run(RunKind.SCHEDULED, BASE));

        Job.open(job, BASE);
        assertThat(first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(RunOutcome.SUCCEEDED);
        awaitQueuedRun(job);
        assertThat(Job.runs(job)).as("one run after it, for the latest tick queued").containsExactly(
                new Run(RunKind.SCHEDULED, BASE), new Run(RunKind.QUEUED, BASE + 2 * HOUR));
        assertThat(history(job)).extracting(run -> run.tick().toEpochMilli(), JobRun::kind, JobRun::outcome)
                .containsExactly(tuple(BASE, RunKind.SCHEDULED, RunOutcome.SUCCEEDED),
                        tuple(BASE + HOUR, RunKind.SCHEDULED, RunOutcome.QUEUED),
                        tuple(BASE + 2 * HOUR, RunKind.SCHEDULED, RunOutcome.QUEUED),
                        tuple(BASE + 2 * HOUR, RunKind.QUEUED, RunOutcome.SUCCEEDED));

        // no run lasts: the next tick runs as scheduled, and nothing is queued after it
        assertThat(fire(job, BASE + 3 * HOUR)).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(Job.runs(job)).hasSize(3).last().isEqualTo(new Run(RunKind.SCHEDULED, BASE + 3 * HOUR));
    }

    /** A method that fails when its lock is busy fails no queued tick: the tick runs later, it is not a failure. */
    @Test
    void aQueuedTickOfAMethodThatFailsWhenBusyDoesNotFail() throws Exception {
        String job = "queue:fail";
        CompletableFuture<RunOutcome> first = holding(job, BASE);
        assertThat(fire(job, BASE + HOUR)).isEqualTo(RunOutcome.QUEUED);
        Job.open(job, BASE);
        first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        awaitQueuedRun(job);
        assertThat(Job.runs(job)).containsExactly(new Run(RunKind.SCHEDULED, BASE),
                new Run(RunKind.QUEUED, BASE + HOUR));
    }

    /** A run queued before a pause does not run while the job is paused, nor after the resume once a newer tick ran. */
    @Test
    void aPauseDropsTheQueuedRun() throws Exception {
        String job = "queue:paused";
        CompletableFuture<RunOutcome> first = holding(job, BASE);
        assertThat(fire(job, BASE + HOUR)).isEqualTo(RunOutcome.QUEUED);
        locks.jobs().pause(job, "ops", "while a tick is queued");
        Job.open(job, BASE);
        first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS); // with the look for a queued run after it
        assertThat(Job.runs(job)).as("no run once the pause took effect")
                .containsExactly(new Run(RunKind.SCHEDULED, BASE));

        assertThat(fire(job, BASE + 2 * HOUR)).isEqualTo(RunOutcome.SKIPPED_PAUSED);
        locks.jobs().resume(job, "ops", null);
        assertThat(fire(job, BASE + 3 * HOUR)).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(Job.runs(job)).containsExactly(new Run(RunKind.SCHEDULED, BASE),
                new Run(RunKind.SCHEDULED, BASE + 3 * HOUR));
    }

    /**
     * The run that lasted looks for a queued tick once its lock is released, after its {@code atLeastFor}: a tick that
     * fires after its body ended but while its lock is still held is not lost.
     */
    @Test
    void aTickQueuedWhileTheLockIsHeldForItsAtLeastForRunsOnceItIsReleased() throws Exception {
        String job = "queue:hold";
        assertThat(fire(job, BASE)).isEqualTo(RunOutcome.SUCCEEDED); // its lock held 5 s from its start
        RunOutcome second = fire(job, BASE + HOUR);
        LockApp.await("the tick fired during the hold to run", DEADLINE,
                () -> Job.runs(job).stream().anyMatch(run -> run.tick() == BASE + HOUR));
        // on a machine slow enough to fire it after the hold, it ran as scheduled: either way once
        assertThat(Job.runs(job)).containsExactly(new Run(RunKind.SCHEDULED, BASE),
                new Run(second == RunOutcome.QUEUED ? RunKind.QUEUED : RunKind.SCHEDULED, BASE + HOUR));
    }

    /** The default: a tick that fires while a run lasts is recorded skipped, and nothing runs for it after. */
    @Test
    void aJobThatSkipsRecordsTheBusyTickAndRunsNothingAfter() throws Exception {
        String job = "queue:skip";
        CompletableFuture<RunOutcome> first = holding(job, BASE);
        assertThat(fire(job, BASE + HOUR)).isEqualTo(RunOutcome.SKIPPED_BUSY);
        Job.open(job, BASE);
        first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        assertThat(Job.runs(job)).containsExactly(new Run(RunKind.SCHEDULED, BASE));
        assertThat(history(job)).extracting(run -> run.tick().toEpochMilli(), JobRun::outcome).containsExactly(
                tuple(BASE, RunOutcome.SUCCEEDED), tuple(BASE + HOUR, RunOutcome.SKIPPED_BUSY));
    }

    /**
     * A lock held by code that looks for no queued tick once it ends (another instance's older version, one that died,
     * here the test itself): the instance that queued the tick watches it, and runs it once the lock is free, once.
     */
    @Test
    void aQueuedTickRunsOnceTheLockIsFreeWhoeverHeldIt() throws Exception {
        String job = "queue:newer";
        var held = locks.acquire(job);
        assertThat(fire(job, BASE)).isEqualTo(RunOutcome.QUEUED);
        assertThat(fire(job, BASE + HOUR)).isEqualTo(RunOutcome.QUEUED);
        assertThat(Job.runs(job)).isEmpty();
        held.release();
        awaitQueuedRun(job);
        assertThat(Job.runs(job)).as("one run, for the latest tick queued")
                .containsExactly(new Run(RunKind.QUEUED, BASE + HOUR));
    }

    /**
     * Waits for a queued run of the job to end: the run whose end launched it, or the instance that queued it, whichever
     * took the tick first, ran it.
     */
    private void awaitQueuedRun(String job) {
        LockApp.await("the queued run of " + job, DEADLINE, () -> history(job).stream()
                .anyMatch(run -> run.kind() == RunKind.QUEUED && run.endedAt() != null));
    }

    /** Fires a tick and waits for its run to start, its body held until {@link Job#open}: how the run ends. */
    private CompletableFuture<RunOutcome> holding(String job, long tick) throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        Job.entered.put(job + "@" + tick, entered);
        Job.gates.put(job + "@" + tick, new CountDownLatch(1));
        CompletableFuture<RunOutcome> run = launch(job, tick);
        assertThat(entered.await(DEADLINE.toSeconds(), TimeUnit.SECONDS)).as("the run of %s started", tick).isTrue();
        return run;
    }

    /** Fires a tick, as the scheduler does: how it ended, once it and the runs it launched ended. */
    private RunOutcome fire(String job, long tick) throws Exception {
        return launch(job, tick).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
    }

    /** Fires a tick on a worker thread: how it ended, once it and what it launched (a queued run) ended too. */
    private CompletableFuture<RunOutcome> launch(String job, long tick) {
        JobTick fired = new JobTick(tick, RunKind.SCHEDULED, new CompletableFuture<>());
        Arc.container().instance(JobLauncher.class).get().launch(((MySqlLockManager) locks).dataSourceName(), job,
                fired);
        return fired.settled().thenCompose(ignored -> fired.outcome());
    }

    /** The job's history, oldest tick first (a tick's queued run after the tick). */
    private List<JobRun> history(String job) {
        return locks.jobs().history(job, 100).stream()
                .sorted(Comparator.comparing(JobRun::tick).thenComparing(JobRun::kind)).toList();
    }

    record Run(RunKind kind, long tick) {
    }

    @ApplicationScoped
    public static class Job {
        // static: the test reads them past the bean's client proxy
        static final Map<String, List<Run>> runs = new ConcurrentHashMap<>();
        /** The runs that wait in their body until the test opens their gate, by job and tick. */
        static final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
        static final Map<String, CountDownLatch> entered = new ConcurrentHashMap<>();

        static List<Run> runs(String job) {
            return runs.getOrDefault(job, List.of());
        }

        static void open(String job, long tick) {
            gates.get(job + "@" + tick).countDown();
        }

        private static void ran(String job, ScheduledExecution execution) {
            String trigger = execution.getTrigger() == null ? "" : execution.getTrigger().getId();
            RunKind kind = trigger.startsWith("queued:") ? RunKind.QUEUED : RunKind.SCHEDULED;
            long tick = execution.getScheduledFireTime().toEpochMilli();
            runs.computeIfAbsent(job, ignored -> new CopyOnWriteArrayList<>()).add(new Run(kind, tick));
            CountDownLatch started = entered.remove(job + "@" + tick);
            if (started != null) {
                started.countDown();
            }
            CountDownLatch gate = gates.get(job + "@" + tick);
            try {
                if (gate != null && !gate.await(DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
                    throw new AssertionError("The test did not let the run of " + Instant.ofEpochMilli(tick) + " end");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Locked(value = "queue:one", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void one(ScheduledExecution execution) {
            ran("queue:one", execution);
        }

        @Locked(value = "queue:fail", onBusy = OnBusy.FAIL)
        @Scheduled(every = "1h", delayed = "1h")
        public void fail(ScheduledExecution execution) {
            ran("queue:fail", execution);
        }

        @Locked(value = "queue:paused", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void paused(ScheduledExecution execution) {
            ran("queue:paused", execution);
        }

        @Locked(value = "queue:hold", onBusy = OnBusy.SKIP, atLeastFor = "5s")
        @Scheduled(every = "1h", delayed = "1h")
        public void hold(ScheduledExecution execution) {
            ran("queue:hold", execution);
        }

        @Locked(value = "queue:skip", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void skip(ScheduledExecution execution) {
            ran("queue:skip", execution);
        }

        @Locked(value = "queue:newer", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void newer(ScheduledExecution execution) {
            ran("queue:newer", execution);
        }
    }
}
