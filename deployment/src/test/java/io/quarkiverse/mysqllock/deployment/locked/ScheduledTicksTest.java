package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * {@code @Locked(onBusy = SKIP)} with a {@code ScheduledExecution} parameter claims each tick in the jobs table: a tick
 * runs once, whenever and wherever it fires again; a tick fired a moment after the next one ran runs once, later, and
 * an older tick does not run.
 */
class ScheduledTicksTest {

    @RegisterExtension
    // NAMED whatever engine an earlier test class left the fleet on: the late tick's test waits in GET_LOCK
    static final QuarkusUnitTest app = LockApp.app(Job.class, Ticks.class)
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "named")
            .setLogRecordPredicate(record -> record.getLoggerName().endsWith("LockedProcessor"))
            .assertLogRecords(records -> assertThat(records).singleElement()
                    .satisfies(record -> assertThat(String.format(record.getMessage(), record.getParameters()))
                            .contains("untrackedSchedule").contains("without a ScheduledExecution parameter")));

    @Inject
    Job job;

    @Inject
    LockManager locks;

    @Test
    void aTickRunsOnceAndAnOlderTickDoesNotRun() throws Exception {
        job.blocking(at(10_000));
        job.blocking(at(10_000));
        job.blocking(at(12_000));
        job.blocking(at(9_000));
        job.blocking(at(13_000));
        assertThat(job.runs()).containsExactly("blocking@10000", "blocking@12000", "blocking@13000");
        assertThat(ServerState.queryString("SELECT CONCAT(job, ' ', state, ' ', settled_tick, ' ', latest_tick)"
                + " FROM mysql_lock_job WHERE name = 'tick:blocking'")).isEqualTo("tick:blocking ACTIVE 12000 13000");
        assertThat(ServerState.queryLong("SELECT fence FROM mysql_lock WHERE name = 'tick@tick:blocking'"))
                .as("the tick row of versions before the jobs table, claimed too").isEqualTo(13_000);
        assertThat(LockApp.otherThreadAcquires(locks, "tick:blocking")).as("a skipped tick leaves its lock free").isTrue();
    }

    /**
     * Quarkus checks each trigger once a second, at its own phase: an instance whose check falls just before the second
     * boundary fires tick N then, just as an instance whose check falls just after it fires tick N + 1. Found by the
     * native run of ScheduledJobAcrossProcessesIT (ten ticks of 70 run nowhere, measured: both fires within 10 ms, the
     * claim of N + 1 first): N was refused as older than a tick that ran, though it never ran. A tick newer than every
     * tick that ran but the latest, and at most two seconds older than it, runs once; anything older still does not.
     */
    @Test
    void aTickFiredJustAfterTheNextOneRanRunsOnce() throws Exception {
        job.blocking(at(50_000));
        job.blocking(at(52_000)); // an instance checking just after the boundary
        job.blocking(at(51_000)); // one checking just before it: 51 000 never ran
        job.blocking(at(51_000));
        job.blocking(at(52_000));
        job.blocking(at(50_000));
        job.blocking(at(50_500));
        job.blocking(at(53_000));
        job.blocking(at(51_500)); // older than 52 000, which ran before 53 000: nothing tells it did not run
        job.blocking(at(56_000));
        job.blocking(at(53_500)); // more than the late-tick window older than the latest
        job.blocking(at(54_000)); // at the edge of the window
        job.blocking(at(55_000)); // between the settled mark (now 54 000) and the latest
        job.blocking(at(54_500));
        assertThat(job.runs()).containsExactly("blocking@50000", "blocking@52000", "blocking@51000", "blocking@53000",
                "blocking@56000", "blocking@54000", "blocking@55000");
    }

    /**
     * A row written without that rule (by an older version of the extension, or its fence moved by an instance still
     * running one, mid-way through a rolling upgrade), or holding anything else, tells nothing of the ticks below its
     * latest: none of them runs, and the next tick runs (no conversion error in strict mode).
     */
    @Test
    void aRowFromAnInstanceWithoutTheRuleRunsNoOlderTick() throws Exception {
        job.upgraded(at(70_000));
        ServerState.update("UPDATE mysql_lock SET owner = NULL WHERE name = 'tick@tick:upgraded'"); // an older version's
        job.upgraded(at(69_000));
        job.upgraded(at(71_000));
        ServerState.update("UPDATE mysql_lock SET fence = 73000 WHERE name = 'tick@tick:upgraded'"); // an older instance
        job.upgraded(at(72_000));
        job.upgraded(at(74_000));
        job.upgraded(at(73_500));
        ServerState.update("UPDATE mysql_lock SET owner = 'vm/1/0a' WHERE name = 'tick@tick:upgraded'"); // not a pair
        job.upgraded(at(73_800));
        job.upgraded(at(75_000));
        assertThat(job.runs()).containsExactly("upgraded@70000", "upgraded@71000", "upgraded@74000", "upgraded@73500",
                "upgraded@75000");
    }

    @Test
    void aTickRunsOnceOnTheAsynchronousPaths() throws Exception {
        assertThat(job.uni(at(20_000)).await().atMost(Duration.ofSeconds(10))).isEqualTo("ran");
        assertThat(job.uni(at(20_000)).await().atMost(Duration.ofSeconds(10))).isNull();
        assertThat(job.stage(at(20_000)).toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo("ran");
        assertThat(job.stage(at(20_000)).toCompletableFuture().get(10, TimeUnit.SECONDS)).isNull();
        assertThat(job.runs()).containsExactly("uni@20000", "stage@20000");
        assertThat(LockApp.otherThreadAcquires(locks, "tick:uni")).isTrue();
        assertThat(LockApp.otherThreadAcquires(locks, "tick:stage")).isTrue();
    }

    /**
     * The instance that claims a tick runs it, or skips it when the job's lock stays busy (a run that still lasts), and
     * gives the claim back: a later fire of the tick, once the lock is free, runs it.
     */
    @Test
    void aTickFindingTheLockBusyIsSkippedAndRunsWhenFiredAgain() throws Exception {
        try (LockHandle held = locks.acquire("tick:busy")) {
            Background.run(() -> job.busy(at(30_000))).get(30, TimeUnit.SECONDS);
        }
        assertThat(job.runs()).isEmpty();
        job.busy(at(30_000));
        job.busy(at(30_000));
        assertThat(job.runs()).as("the skipped tick's claim was given back: it runs once the lock is free")
                .containsExactly("busy@30000");
    }

    /**
     * Quarkus checks triggers once a second, so an instance can fire a tick up to a second late, and its run of tick N
     * then holds the lock when the others fire tick N + 1. Found by the native run of ScheduledJobAcrossProcessesIT (six
     * ticks of 66 run nowhere): the others skipped N + 1 at once, a tick nobody ran. A tick now waits up to a second for
     * the lock before it is busy, and runs once the older tick's run ends.
     * <p>
     * That second is the product's grace, on its clock: a try whose release came after it may have ended (the tick then
     * rightly skipped) proves nothing, and is made again on a lock of its own.
     */
    @Test
    void aTickFiringWhileAnOlderTickRunsWaitsForItAndRuns() throws Exception {
        LockApp.conclusively("the older run's release within the tick's grace", attempt -> {
            String name = "tick:late-" + attempt;
            job.runs().clear();
            CompletableFuture<Void> next;
            boolean waited;
            long start;
            long releasedAfter;
            try (Connection other = TestDatabase.shared().connect()) { // another instance, running tick 59 000 late
                assertThat(ServerState.queryLongOn(other, "SELECT GET_LOCK('" + name + "', 0)")).isEqualTo(1);
                long waiting = ServerState.waitingInGetLock();
                start = System.nanoTime();
                next = Background.run(() -> job.late(attempt, at(60_000)));
                LockApp.await("the tick to wait for the lock", Duration.ofSeconds(30),
                        () -> ServerState.waitingInGetLock() > waiting || next.isDone());
                waited = !next.isDone();
                assertThat(ServerState.queryLongOn(other, "SELECT RELEASE_LOCK('" + name + "')")).isEqualTo(1);
                releasedAfter = LockApp.millisSince(start);
            }
            next.get(30, TimeUnit.SECONDS);
            if (releasedAfter >= 1000 && !(waited && job.runs().contains("late@60000"))) {
                return false;
            }
            assertThat(waited).as("the tick waits while the older run holds the lock").isTrue();
            assertThat(job.runs()).containsExactly("late@60000");
            job.late(attempt, at(60_000));
            assertThat(job.runs()).as("and only once").containsExactly("late@60000");
            return true;
        });
    }

    /**
     * The default {@code onBusy = FAIL} claims ticks too: a tick that ran elsewhere does not run again (the call
     * returns without running), and a busy lock still fails the call of the instance that claimed the tick, which gives
     * the claim back (a retry runs it). Before, only {@code SKIP} claimed ticks, and a {@code FAIL} method whose trigger
     * fired late, once the lock was free, ran the tick a second time.
     */
    @Test
    void theDefaultOnBusyClaimsTicksToo() throws Exception {
        job.failing(at(40_000));
        job.failing(at(40_000));
        assertThat(job.failingUni(at(40_000)).await().atMost(Duration.ofSeconds(10))).isEqualTo("ran");
        assertThat(job.failingUni(at(40_000)).await().atMost(Duration.ofSeconds(10))).isNull();
        assertThat(job.runs()).containsExactly("failing@40000", "failing-uni@40000");
        try (LockHandle held = locks.acquire("tick:failing")) {
            assertThatThrownBy(() -> Background.run(() -> job.failing(at(41_000))).join())
                    .hasCauseInstanceOf(LockNotAcquiredException.class);
        }
        job.failing(at(41_000));
        assertThat(job.runs()).containsExactly("failing@40000", "failing-uni@40000", "failing@41000");
    }

    /**
     * An {@code every} trigger fires at different times on each instance (each counts from its own start): its ticks
     * are the intervals of the epoch they fall in, so the job runs once per interval across the fleet.
     */
    @Test
    void anEveryJobRunsOncePerInterval() {
        long interval = 60 * 60_000; // every = "1h"
        long start = 1000 * interval;
        job.hourly(at(start + 10_000)); // instance A, ten seconds into the hour
        job.hourly(at(start + 50 * 60_000)); // instance B, fifty minutes into the same hour
        job.hourly(at(start + interval + 5_000)); // the next hour
        job.hourly(at(start + 30 * 60_000)); // a late trigger of the first hour
        assertThat(job.runs()).containsExactly("hourly@" + (start + 10_000), "hourly@" + (start + interval + 5_000));
        assertThat(ServerState.queryLong("SELECT fence FROM mysql_lock WHERE name = 'tick@tick:hourly'"))
                .isEqualTo(start + interval);
        job.configured(at(start + 1_000));
        job.configured(at(start + 20 * 60_000));
        job.configured(at(start + 31 * 60_000));
        // every = "${tick.every:30m}": the default's half hours
        assertThat(job.runs()).containsSubsequence("configured@" + (start + 1_000), "configured@" + (start + 31 * 60_000))
                .doesNotContain("configured@" + (start + 20 * 60_000));
    }

    @Test
    void withoutTheParameterEveryCallRuns() {
        job.untracked();
        job.untracked();
        assertThat(job.runs()).containsExactly("untracked", "untracked");
    }

    @org.junit.jupiter.api.BeforeEach
    void clear() {
        job.runs().clear();
    }

    static ScheduledExecution at(long epochMillis) {
        return Ticks.at(epochMillis);
    }

    @ApplicationScoped
    public static class Job {

        final List<String> runs = new CopyOnWriteArrayList<>();

        /** Through a method: the test holds a client proxy, whose own fields are not the bean's. */
        List<String> runs() {
            return runs;
        }

        @Locked(value = "tick:blocking", onBusy = OnBusy.SKIP)
        public void blocking(ScheduledExecution execution) {
            runs.add("blocking@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "tick:upgraded", onBusy = OnBusy.SKIP)
        public void upgraded(ScheduledExecution execution) {
            runs.add("upgraded@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "tick:uni", onBusy = OnBusy.SKIP)
        public Uni<String> uni(ScheduledExecution execution) {
            runs.add("uni@" + execution.getScheduledFireTime().toEpochMilli());
            return Uni.createFrom().item("ran");
        }

        @Locked(value = "tick:stage", onBusy = OnBusy.SKIP)
        public CompletionStage<String> stage(ScheduledExecution execution) {
            runs.add("stage@" + execution.getScheduledFireTime().toEpochMilli());
            return CompletableFuture.completedFuture("ran");
        }

        @Locked(value = "tick:busy", onBusy = OnBusy.SKIP)
        public void busy(ScheduledExecution execution) {
            runs.add("busy@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "tick:late-{0}", onBusy = OnBusy.SKIP)
        public void late(int attempt, ScheduledExecution execution) {
            runs.add("late@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked("tick:failing")
        public void failing(ScheduledExecution execution) {
            runs.add("failing@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked("tick:failing-uni")
        public Uni<String> failingUni(ScheduledExecution execution) {
            runs.add("failing-uni@" + execution.getScheduledFireTime().toEpochMilli());
            return Uni.createFrom().item("ran");
        }

        @Locked(value = "tick:untracked", onBusy = OnBusy.SKIP)
        public void untracked() {
            runs.add("untracked");
        }

        /** Never fires during the test (the test calls it with ticks of its own). */
        @Scheduled(every = "1h", delayed = "1h")
        @Locked(value = "tick:hourly", onBusy = OnBusy.SKIP)
        void hourly(ScheduledExecution execution) {
            runs.add("hourly@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Scheduled(every = "${tick.every:30m}", delayed = "1h")
        @Locked(value = "tick:configured", onBusy = OnBusy.SKIP)
        void configured(ScheduledExecution execution) {
            runs.add("configured@" + execution.getScheduledFireTime().toEpochMilli());
        }

        /** Never fires during the test; only its build-time warning matters. */
        @Scheduled(every = "1h", delayed = "1h")
        @Locked(value = "tick:untracked-schedule", onBusy = OnBusy.SKIP)
        void untrackedSchedule() {
            runs.add("untracked-schedule");
        }
    }
}
