package io.quarkiverse.mysqllock.deployment.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;

/**
 * {@code missed-ticks}: the ticks no instance ran (every instance down, or the job paused) are caught up once across
 * the fleet, after the first tick that runs again, as the policy says: once for all (RUN_ONCE), each of the latest
 * within the window up to a maximum (RUN_ALL), or not at all (SKIP, the default). The ticks are fired here as the
 * scheduler fires them, at chosen scheduled times: the gap between two of them is the time every instance was down.
 * Run on each engine by the classes that extend it, each with its own application ({@link #app}).
 */
abstract class MissedTicksContract {

    private static final long HOUR = Duration.ofHours(1).toMillis();
    private static final long SECOND = 1_000;
    /** A tick of every hourly job, far from now (their schedules do not fire in the test). */
    private static final long BASE = 400_000 * HOUR;

    /** The test application, with the jobs' settings, as each engine's class completes it. */
    static QuarkusUnitTest app(QuarkusUnitTest app) {
        return app
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:once\".missed-ticks", "run-once")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:all\".missed-ticks", "run-all")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:all\".max-catch-up-runs", "3")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:window\".missed-ticks", "run-all")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:window\".catch-up-window", "150m")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:cron\".missed-ticks", "run-all")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:cron\".catch-up-window", "7d")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:seconds\".missed-ticks", "run-all")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:late\".missed-ticks", "run-all")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:paused\".missed-ticks", "run-once")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:disabled\".missed-ticks", "run-once")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:apart\".missed-ticks", "run-all")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:busy\".missed-ticks", "run-all")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:third\".missed-ticks", "run-all")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:onceapart\".missed-ticks", "run-once")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:pauselate\".missed-ticks", "run-all")
                .overrideConfigKey("quarkus.mysql-lock.jobs.\"catch:off\".missed-ticks", "run-once");
    }

    /**
     * Forgets what an earlier test class of the same server left of these jobs: their rows (in the jobs table, and the
     * tick rows a job's row is seeded from) and their history.
     */
    @BeforeAll
    static void forgetJobs() {
        ServerState.forgetJobs("catch:%");
        Job.runs.clear();
    }

    /** The last missed tick the job keeps to catch up, in either of its ranges; 0 for none. */
    long pending(String job) {
        return ServerState.queryLong("SELECT GREATEST(catch_up_to, next_catch_up_to) FROM mysql_lock_job WHERE job = ?",
                job);
    }

    /** The job's settled mark: just below the tick whose claim found a gap, else the latest tick claimed before it. */
    long settled(String job) {
        return ServerState.queryLong("SELECT settled_tick FROM mysql_lock_job WHERE job = ?", job);
    }

    @Inject
    Job job;

    @Inject
    LockManager locks;

    @Test
    void runOnceCatchesUpOnceForTheLatestMissedTick() {
        job.once(Ticks.at(BASE));
        job.once(Ticks.at(BASE + 5 * HOUR)); // every instance was down for four ticks
        awaitCatchUps("catch:once", 1);
        assertThat(Job.runs("catch:once")).containsExactly(
                new Run(RunKind.SCHEDULED, BASE), new Run(RunKind.SCHEDULED, BASE + 5 * HOUR),
                new Run(RunKind.CATCH_UP, BASE + 4 * HOUR));
        assertThat(caughtUp("catch:once")).extracting(JobRun::tick, JobRun::outcome)
                .containsExactly(tuple(Instant.ofEpochMilli(BASE + 4 * HOUR), RunOutcome.SUCCEEDED));
        assertThat(pending("catch:once")).as("nothing left to catch up").isZero();

        job.once(Ticks.at(BASE + 6 * HOUR));
        assertThat(pending("catch:once")).isZero();
        assertThat(Job.runs("catch:once")).as("no gap, no catch-up").hasSize(4);
    }

    @Test
    void runAllCatchesUpTheLatestTicksUpToItsMaximumOldestFirst() {
        job.all(Ticks.at(BASE));
        job.all(Ticks.at(BASE + 6 * HOUR)); // five missed: the latest three run
        awaitCatchUps("catch:all", 3);
        assertThat(Job.runs("catch:all")).containsExactly(
                new Run(RunKind.SCHEDULED, BASE), new Run(RunKind.SCHEDULED, BASE + 6 * HOUR),
                new Run(RunKind.CATCH_UP, BASE + 3 * HOUR), new Run(RunKind.CATCH_UP, BASE + 4 * HOUR),
                new Run(RunKind.CATCH_UP, BASE + 5 * HOUR));
        assertThat(pending("catch:all")).isZero();
    }

    @Test
    void theWindowBoundsHowFarBackACatchUpLooks() {
        job.window(Ticks.at(BASE));
        job.window(Ticks.at(BASE + 6 * HOUR)); // missed 1 to 5; within 150 minutes of the last: 3, 4, 5
        awaitCatchUps("catch:window", 3);
        assertThat(caughtUp("catch:window")).extracting(run -> run.tick().toEpochMilli())
                .containsExactly(BASE + 3 * HOUR, BASE + 4 * HOUR, BASE + 5 * HOUR);
    }

    /** A daily job down for three days, with a week's window. */
    @Test
    void aCronJobCatchesUpItsOwnFireTimes() {
        long first = Instant.parse("2099-03-01T03:00:00Z").toEpochMilli();
        job.cron(Ticks.at(first));
        job.cron(Ticks.at(Instant.parse("2099-03-05T03:00:00Z").toEpochMilli()));
        awaitCatchUps("catch:cron", 3);
        assertThat(caughtUp("catch:cron")).extracting(JobRun::tick).containsExactly(
                Instant.parse("2099-03-02T03:00:00Z"), Instant.parse("2099-03-03T03:00:00Z"),
                Instant.parse("2099-03-04T03:00:00Z"));
    }

    /** The default: a job runs from its next tick on. */
    @Test
    void skipCatchesNothingUp() {
        job.skip(Ticks.at(BASE));
        job.skip(Ticks.at(BASE + 5 * HOUR));
        assertThat(Job.runs("catch:skip")).extracting(Run::kind).containsOnly(RunKind.SCHEDULED).hasSize(2);
        assertThat(pending("catch:skip")).isZero();
    }

    /**
     * Quarkus fires each trigger at its own phase: a tick may arrive after the next one was claimed, and it runs then.
     * That is no gap: it is not caught up besides.
     */
    @Test
    void aTickFiredLateIsNoGap() {
        long base = BASE / SECOND * SECOND;
        job.seconds(Ticks.at(base));
        job.seconds(Ticks.at(base + 2 * SECOND));
        job.seconds(Ticks.at(base + SECOND)); // late, within the window
        assertThat(pending("catch:seconds")).isZero();
        assertThat(Job.runs("catch:seconds")).containsExactly(new Run(RunKind.SCHEDULED, base),
                new Run(RunKind.SCHEDULED, base + 2 * SECOND), new Run(RunKind.SCHEDULED, base + SECOND));
    }

    /** A gap also takes the ticks that could still come late: they are the catch-up's, and do not run twice. */
    @Test
    void aGapTakesTheLateTicksToo() {
        long base = BASE / SECOND * SECOND;
        job.late(Ticks.at(base));
        job.late(Ticks.at(base + 5 * SECOND)); // missed 1 to 4
        awaitCatchUps("catch:late", 4);
        job.late(Ticks.at(base + 4 * SECOND)); // a slow instance fires 4 late: the catch-up ran it
        assertThat(Job.runs("catch:late").stream().filter(run -> run.tick() == base + 4 * SECOND))
                .containsExactly(new Run(RunKind.CATCH_UP, base + 4 * SECOND));
    }

    /** The ticks claimed while the job was paused are caught up once it runs again. */
    @Test
    void theTicksOfAPauseAreCaughtUpAfterTheResume() {
        job.paused(Ticks.at(BASE));
        locks.jobs().pause("catch:paused", "ops", "maintenance");
        job.paused(Ticks.at(BASE + HOUR));
        job.paused(Ticks.at(BASE + 2 * HOUR));
        assertThat(locks.jobs().history("catch:paused", 2)).extracting(JobRun::outcome)
                .containsOnly(RunOutcome.SKIPPED_PAUSED);
        locks.jobs().resume("catch:paused", "ops", null);
        job.paused(Ticks.at(BASE + 3 * HOUR));
        awaitCatchUps("catch:paused", 1);
        assertThat(Job.runs("catch:paused")).containsExactly(new Run(RunKind.SCHEDULED, BASE),
                new Run(RunKind.SCHEDULED, BASE + 3 * HOUR), new Run(RunKind.CATCH_UP, BASE + 2 * HOUR));
    }

    /** A disabled job's missed ticks are not caught up: disabling forgets them, and enabling starts afresh. */
    @Test
    void disablingForgetsTheMissedTicks() {
        job.disabled(Ticks.at(BASE));
        locks.jobs().pause("catch:disabled", "ops", null);
        job.disabled(Ticks.at(BASE + HOUR));
        assertThat(pending("catch:disabled")).as("the paused tick, to catch up").isEqualTo(BASE + HOUR);
        locks.jobs().disable("catch:disabled", "ops", null);
        assertThat(pending("catch:disabled")).isZero();
        locks.jobs().enable("catch:disabled", "ops", null);
        job.disabled(Ticks.at(BASE + 2 * HOUR));
        assertThat(pending("catch:disabled")).isZero();
        assertThat(Job.runs("catch:disabled")).extracting(Run::kind).containsOnly(RunKind.SCHEDULED).hasSize(2);
    }

    /**
     * A job paused in the middle of its catch-ups keeps the rest of them, and the ticks claimed while it is paused come
     * after ticks that ran: the two ranges are kept apart (merged, the range would run the ticks between them again),
     * and both are caught up after the resume, each tick once, the older range first.
     */
    @Test
    void missedTicksApartAreEachCaughtUpWithoutTheTicksThatRanBetweenThem() {
        job.apart(Ticks.at(BASE));
        Job.pauseAt.put("catch:apart", BASE + HOUR); // its first catch-up pauses the job
        job.apart(Ticks.at(BASE + 4 * HOUR)); // missed 1, 2 and 3
        awaitCatchUps("catch:apart", 1);
        job.apart(Ticks.at(BASE + 5 * HOUR)); // paused: to catch up, after the 4th that ran
        locks.jobs().resume("catch:apart", "ops", null);
        job.apart(Ticks.at(BASE + 6 * HOUR));
        awaitCatchUps("catch:apart", 4);
        assertThat(Job.runs("catch:apart")).as("in the order they ran: no tick twice, the older range first")
                .containsExactly(new Run(RunKind.SCHEDULED, BASE), new Run(RunKind.SCHEDULED, BASE + 4 * HOUR),
                        new Run(RunKind.CATCH_UP, BASE + HOUR), new Run(RunKind.SCHEDULED, BASE + 6 * HOUR),
                        new Run(RunKind.CATCH_UP, BASE + 2 * HOUR), new Run(RunKind.CATCH_UP, BASE + 3 * HOUR),
                        new Run(RunKind.CATCH_UP, BASE + 5 * HOUR));
        assertThat(pending("catch:apart")).as("nothing left to catch up").isZero();
    }

    /**
     * Two ranges are kept: a third range apart from both (the job paused again before the catch-ups ran) replaces the
     * second, whose ticks go without their catch-up (its claimer warns); none runs twice.
     */
    @Test
    void aThirdRangeApartReplacesTheSecond() {
        job.third(Ticks.at(BASE));
        Job.pauseAt.put("catch:third", BASE + HOUR); // its first catch-up pauses the job
        job.third(Ticks.at(BASE + 3 * HOUR)); // missed 1 and 2
        awaitCatchUps("catch:third", 1);
        job.third(Ticks.at(BASE + 4 * HOUR)); // paused: the second range
        Job.pauseAt.put("catch:third", BASE + 5 * HOUR); // the tick after the resume pauses the job again
        locks.jobs().resume("catch:third", "ops", null);
        job.third(Ticks.at(BASE + 5 * HOUR));
        job.third(Ticks.at(BASE + 6 * HOUR)); // paused: a third range, which replaces the second
        locks.jobs().resume("catch:third", "ops", null);
        job.third(Ticks.at(BASE + 7 * HOUR));
        awaitCatchUps("catch:third", 3);
        assertThat(caughtUp("catch:third")).extracting(run -> run.tick().toEpochMilli())
                .containsExactly(BASE + HOUR, BASE + 2 * HOUR, BASE + 6 * HOUR);
        assertThat(Job.runs("catch:third")).extracting(Run::tick).doesNotHaveDuplicates();
        assertThat(pending("catch:third")).as("nothing left to catch up").isZero();
    }

    /**
     * {@code run-once} is one run for every missed tick, in one range or two: the latest of them, the older range's
     * ticks dropped with it.
     */
    @Test
    void runOnceCatchesUpOnceForTwoRangesApart() {
        job.onceApart(Ticks.at(BASE));
        Job.pauseAt.put("catch:onceapart", BASE + 3 * HOUR); // the tick after the gap pauses the job: no catch-up yet
        job.onceApart(Ticks.at(BASE + 3 * HOUR)); // missed 1 and 2
        job.onceApart(Ticks.at(BASE + 4 * HOUR)); // paused: the second range
        job.onceApart(Ticks.at(BASE + 5 * HOUR)); // paused: the second range extended
        locks.jobs().resume("catch:onceapart", "ops", null);
        job.onceApart(Ticks.at(BASE + 6 * HOUR));
        awaitCatchUps("catch:onceapart", 1);
        assertThat(caughtUp("catch:onceapart")).extracting(run -> run.tick().toEpochMilli())
                .containsExactly(BASE + 5 * HOUR);
        assertThat(pending("catch:onceapart")).as("nothing left to catch up").isZero();
    }

    /**
     * A tick skipped because the job's previous run still held its lock was fired, and skipped as the job says: the next
     * tick's claim finds no gap in it, and it is not caught up.
     */
    @Test
    void aTickSkippedBecauseTheLockWasBusyIsNotCaughtUp() throws Exception {
        job.busy(Ticks.at(BASE));
        try (var held = locks.acquire("catch:busy")) {
            // fired on another thread (this one's hold is its own): busy past its wait, skipped, its claim given back
            java.util.concurrent.CompletableFuture.runAsync(() -> job.busy(Ticks.at(BASE + HOUR)))
                    .get(60, java.util.concurrent.TimeUnit.SECONDS);
        }
        job.busy(Ticks.at(BASE + 2 * HOUR));
        assertThat(settled("catch:busy")).as("no gap found: the settled mark is the latest tick before it")
                .isEqualTo(BASE);
        assertThat(pending("catch:busy")).isZero();
        assertThat(Job.runs("catch:busy")).containsExactly(new Run(RunKind.SCHEDULED, BASE),
                new Run(RunKind.SCHEDULED, BASE + 2 * HOUR));
    }

    /**
     * The ticks recorded while the job is paused are the catch-up's: one of them fired late, after the resume, does not
     * run besides.
     */
    @Test
    void aTickOfAPauseFiredLateAfterTheResumeRunsOnlyAsTheCatchUp() {
        long base = BASE / SECOND * SECOND;
        job.pauseLate(Ticks.at(base));
        locks.jobs().pause("catch:pauselate", "ops", null);
        job.pauseLate(Ticks.at(base + 2 * SECOND)); // recorded with the one before it, to catch up
        locks.jobs().resume("catch:pauselate", "ops", null);
        job.pauseLate(Ticks.at(base + SECOND)); // a slow instance fires it late
        assertThat(Job.runs("catch:pauselate")).as("the late tick is settled: it is the catch-up's")
                .containsExactly(new Run(RunKind.SCHEDULED, base));
        job.pauseLate(Ticks.at(base + 3 * SECOND));
        awaitCatchUps("catch:pauselate", 2);
        assertThat(Job.runs("catch:pauselate")).extracting(Run::tick).doesNotHaveDuplicates();
    }

    /**
     * The ticks a disabled job skipped are skipped for good, also when no instance claimed them (the fleet was down):
     * the claim after {@code enable} finds no gap in them.
     */
    @Test
    void theTicksOfADisabledJobAreNotCaughtUpAfterItIsEnabled() {
        job.off(Ticks.at(BASE));
        locks.jobs().disable("catch:off", "ops", null);
        locks.jobs().enable("catch:off", "ops", null); // every instance was down meanwhile: no tick claimed
        job.off(Ticks.at(BASE + 5 * HOUR));
        assertThat(settled("catch:off")).as("no gap found").isEqualTo(BASE);
        assertThat(pending("catch:off")).isZero();
    }

    private void awaitCatchUps(String job, int count) {
        LockApp.await(count + " catch-ups of " + job + " ended", Duration.ofSeconds(60),
                () -> caughtUp(job).size() >= count && caughtUp(job).stream().allMatch(run -> run.endedAt() != null));
        assertThat(caughtUp(job)).as("exactly that many").hasSize(count);
    }

    /** The job's catch-up runs in its history, oldest tick first. */
    private List<JobRun> caughtUp(String job) {
        return locks.jobs().history(job, 100).stream().filter(run -> run.kind() == RunKind.CATCH_UP)
                .sorted(Comparator.comparing(JobRun::tick)).toList();
    }

    record Run(RunKind kind, long tick) {
    }

    @ApplicationScoped
    public static class Job {
        // static: the test reads them past the bean's client proxy
        static final Map<String, List<Run>> runs = new ConcurrentHashMap<>();

        /** A job that pauses itself when it catches up this tick. */
        static final Map<String, Long> pauseAt = new ConcurrentHashMap<>();

        @Inject
        LockManager locks;

        static List<Run> runs(String job) {
            return runs.getOrDefault(job, List.of());
        }

        private static void ran(String job, ScheduledExecution execution) {
            RunKind kind = execution.getTrigger() != null && execution.getTrigger().getId().startsWith("catch_up:")
                    ? RunKind.CATCH_UP
                    : RunKind.SCHEDULED;
            runs.computeIfAbsent(job, ignored -> new CopyOnWriteArrayList<>())
                    .add(new Run(kind, execution.getScheduledFireTime().toEpochMilli()));
        }

        @Locked(value = "catch:once", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void once(ScheduledExecution execution) {
            ran("catch:once", execution);
        }

        @Locked(value = "catch:all", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void all(ScheduledExecution execution) {
            ran("catch:all", execution);
        }

        @Locked(value = "catch:window", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void window(ScheduledExecution execution) {
            ran("catch:window", execution);
        }

        @Locked(value = "catch:cron", onBusy = OnBusy.SKIP)
        @Scheduled(cron = "0 0 3 * * ? 2098-2099", timeZone = "UTC")
        public void cron(ScheduledExecution execution) {
            ran("catch:cron", execution);
        }

        @Locked(value = "catch:skip", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void skip(ScheduledExecution execution) {
            ran("catch:skip", execution);
        }

        @Locked(value = "catch:seconds", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1s", delayed = "1h")
        public void seconds(ScheduledExecution execution) {
            ran("catch:seconds", execution);
        }

        @Locked(value = "catch:late", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1s", delayed = "1h")
        public void late(ScheduledExecution execution) {
            ran("catch:late", execution);
        }

        @Locked(value = "catch:paused", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void paused(ScheduledExecution execution) {
            ran("catch:paused", execution);
        }

        @Locked(value = "catch:apart", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void apart(ScheduledExecution execution) {
            ran("catch:apart", execution);
            if (pauseAt.remove("catch:apart", execution.getScheduledFireTime().toEpochMilli())) {
                locks.jobs().pause("catch:apart", "ops", "in the middle of its catch-ups");
            }
        }

        @Locked(value = "catch:third", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void third(ScheduledExecution execution) {
            ran("catch:third", execution);
            if (pauseAt.remove("catch:third", execution.getScheduledFireTime().toEpochMilli())) {
                locks.jobs().pause("catch:third", "ops", "after a run");
            }
        }

        @Locked(value = "catch:onceapart", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void onceApart(ScheduledExecution execution) {
            ran("catch:onceapart", execution);
            if (pauseAt.remove("catch:onceapart", execution.getScheduledFireTime().toEpochMilli())) {
                locks.jobs().pause("catch:onceapart", "ops", "after a run");
            }
        }

        @Locked(value = "catch:busy", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void busy(ScheduledExecution execution) {
            ran("catch:busy", execution);
        }

        @Locked(value = "catch:rollpause", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void rollPause(ScheduledExecution execution) {
            ran("catch:rollpause", execution);
        }

        @Locked(value = "catch:rollback", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void rollback(ScheduledExecution execution) {
            ran("catch:rollback", execution);
        }

        @Locked(value = "catch:pauselate", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1s", delayed = "1h")
        public void pauseLate(ScheduledExecution execution) {
            ran("catch:pauselate", execution);
        }

        @Locked(value = "catch:off", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void off(ScheduledExecution execution) {
            ran("catch:off", execution);
        }

        @Locked(value = "catch:disabled", onBusy = OnBusy.SKIP)
        @Scheduled(every = "1h", delayed = "1h")
        public void disabled(ScheduledExecution execution) {
            ran("catch:disabled", execution);
        }
    }
}
