package io.quarkiverse.mysqllock.deployment.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.DistributedReadWriteLock;
import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.Ticks;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * {@code quarkus.mysql-lock.in-memory=true}: an application with no datasource at all gets a LockManager with the
 * engines' contract - re-entrancy, fencing tokens, busy answers, caps, losses told - and the primitives built on it.
 */
class InMemoryEngineTest {

    @RegisterExtension
    static final QuarkusUnitTest app = new QuarkusUnitTest()
            .withApplicationRoot(jar -> jar.addClasses(Background.class, TickJob.class, Ticks.class, LockApp.class))
            .overrideConfigKey("quarkus.mysql-lock.in-memory", "true")
            // no database at all: the default datasource (quarkus-jdbc-mysql) gets no URL and no Dev Services
            .overrideConfigKey("quarkus.datasource.devservices.enabled", "false");

    @Inject
    LockManager locks;

    @Inject
    TickJob job;

    @Test
    void theManagerNeedsNoDatabase() {
        assertThat(((MySqlLockManager) locks).engine()).isInstanceOf(InMemoryEngine.class);
        assertThat(locks.mode()).isEqualTo(LockMode.LEASE);
        assertThat(((MySqlLockManager) locks).health().isUp()).isTrue();
        assertThat(((MySqlLockManager) locks).health().data()).containsEntry("engine",
                "in-memory (tests and dev mode only: no database)");
    }

    @Test
    void aNestedHoldSharesTheLockAndItsTokenAndOtherThreadsAreRefused() throws Exception {
        try (LockHandle outer = locks.acquire("mem:nested", Duration.ZERO)) {
            try (LockHandle inner = locks.acquire("mem:nested", Duration.ZERO)) {
                assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
            }
            assertThat(outer.isValid()).as("held until the outer hold is released").isTrue();
            assertThat(Background.supply(() -> locks.tryAcquire("mem:nested")).get(5, TimeUnit.SECONDS)).isEmpty();
            LockNotAcquiredException busy = Background.supply(() -> {
                try {
                    locks.acquire("mem:nested", Duration.ofMillis(50));
                    return null;
                } catch (LockNotAcquiredException e) {
                    return e;
                }
            }).get(5, TimeUnit.SECONDS);
            assertThat(busy.reason()).isEqualTo(LockNotAcquiredException.Reason.BUSY);
            assertThat(busy.getMessage()).contains("mem:nested").contains("thread '");
        }
        assertThat(locks.isLocked("mem:nested")).isFalse();
    }

    @Test
    void fencingTokensGrowPerNameAcrossHolders() throws Exception {
        long first;
        try (LockHandle handle = locks.acquire("mem:fence", Duration.ZERO)) {
            first = handle.fencingToken();
        }
        long second = Background.supply(() -> {
            try (LockHandle handle = locks.acquire("mem:fence", Duration.ZERO)) {
                return handle.fencingToken();
            }
        }).get(5, TimeUnit.SECONDS);
        assertThat(second).isGreaterThan(first);
    }

    @Test
    void aWaiterGetsTheLockWhenItIsReleased() throws Exception {
        LockHandle holder = locks.acquire("mem:wait", Duration.ZERO);
        CompletableFuture<Long> waiter = Background.supply(() -> {
            try (LockHandle handle = locks.acquire("mem:wait", Duration.ofSeconds(10))) {
                return handle.fencingToken();
            }
        });
        assertThat(waiter).isNotDone();
        long released = holder.fencingToken();
        holder.release();
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(released);
    }

    @Test
    void aCappedHoldIsLostAtItsEndUnlessExtended() throws Exception {
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        LockHandle capped = locks.acquire("mem:cap", LockOptions.waitingUpTo(Duration.ZERO)
                .holdingAtMost(Duration.ofMillis(600))).onLost(lost::complete);
        assertThat(capped.extend(Duration.ofSeconds(30))).isTrue();
        // past the first cap's end: extended, the hold lives on (time passing is what is tested)
        TimeUnit.MILLISECONDS.sleep(900);
        assertThat(lost).isNotDone();
        assertThat(capped.isValid()).isTrue();
        assertThat(capped.extend(Duration.ofMillis(500))).isTrue();
        assertThat(lost.get(10, TimeUnit.SECONDS).reason()).isEqualTo(LockLostException.Reason.LEASE_EXPIRED);
        assertThat(capped.isValid()).isFalse();
        assertThat(locks.tryAcquire("mem:cap")).as("free once the lease ended").isPresent().get()
                .satisfies(LockHandle::release);
        capped.release();
    }

    @Test
    void aForcedReleaseTellsTheHolder() throws Exception {
        CompletableFuture<LockLostException> lost = new CompletableFuture<>();
        LockHandle handle = locks.acquire("mem:force", Duration.ZERO).onLost(lost::complete);
        assertThat(locks.forceRelease("mem:force")).isTrue();
        assertThat(lost.get(10, TimeUnit.SECONDS).lockName()).isEqualTo("mem:force");
        assertThat(handle.isValid()).isFalse();
        handle.release();
        assertThat(locks.forceRelease("mem:force")).isFalse();
        assertThat(locks.held()).isEmpty();
    }

    @Test
    void semaphoresWorkOnIt() throws Exception {
        DistributedSemaphore semaphore = locks.semaphore("mem:sem", 2);
        LockHandle one = semaphore.acquire(Duration.ZERO);
        LockHandle two = semaphore.acquire(Duration.ZERO);
        assertThat(semaphore.tryAcquire(Duration.ZERO)).isEmpty();
        assertThat(locks.semaphore("mem:sem", 3).permits()).as("the count stored first").isEqualTo(2);
        assertThat(locks.semaphore("mem:sem", 3).tryAcquire(Duration.ZERO)).isEmpty();
        semaphore.changePermits(3);
        locks.semaphore("mem:sem", 1).acquire(Duration.ZERO).release();
        semaphore.changePermits(2);
        one.release();
        two.release();
        assertThat(semaphore.availablePermits()).isEqualTo(2);
        DistributedReadWriteLock readWrite = locks.readWriteLock("mem:rw");
        readWrite.raiseMaxReaders(20);
        assertThat(locks.readWriteLock("mem:rw").maxReaders()).isEqualTo(20);
        assertThatThrownBy(() -> readWrite.raiseMaxReaders(19)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * A scheduled method's ticks are claimed in memory as the lock table claims them: a tick runs once, a tick fired a
     * moment after the next one ran runs once too, an older one not at all, whatever {@code onBusy} says. Before,
     * in-memory mode threw on every tick of such a method.
     */
    @Test
    void scheduledTicksAreClaimedInMemory() throws Exception {
        job.run(Ticks.at(5_000));
        job.run(Ticks.at(5_000));
        job.run(Ticks.at(7_000, Instant.ofEpochMilli(8_000)));
        job.run(Ticks.at(6_000));
        job.run(Ticks.at(6_000));
        job.run(Ticks.at(4_000));
        assertThat(job.async(Ticks.at(6_000)).await().atMost(Duration.ofSeconds(10))).isEqualTo("ran");
        assertThat(job.async(Ticks.at(6_000)).await().atMost(Duration.ofSeconds(10))).isNull();
        assertThat(job.runs()).containsExactly("run@5000", "run@7000", "run@6000", "async@6000");
        assertThat(locks.jobs().history("mem:tick", 10)).extracting(run -> run.tick().toEpochMilli() + " " + run.outcome())
                .containsExactly("6000 SUCCEEDED", "7000 SUCCEEDED", "5000 SUCCEEDED");
        assertThat(locks.jobs().job("mem:tick")).hasValueSatisfying(info -> {
            assertThat(info.state()).isEqualTo(JobState.ACTIVE);
            assertThat(info.latestTick()).isEqualTo(Instant.ofEpochMilli(7_000));
            assertThat(info.nextFire()).isEqualTo(Instant.ofEpochMilli(8_000));
            assertThat(info.lastOutcome()).isEqualTo(RunOutcome.SUCCEEDED);
            assertThat(info.lastSuccess()).isNotNull();
            assertThat(info.lastFailure()).isNull();
        });
        assertThat(locks.jobs().jobs()).extracting(JobInfo::name).contains("mem:tick", "mem:tick-async");
    }

    /**
     * The in-memory history keeps what the jobs tables keep: a failure's first line only, and a tick not run (its lock
     * not had) is no run: the job's last run stays the failure.
     */
    @Test
    void theInMemoryHistoryKeepsWhatTheTablesKeep() throws Exception {
        assertThatThrownBy(() -> job.failing(Ticks.at(1_000))).isInstanceOf(IllegalStateException.class);
        AtomicReference<Thread> waiting = new AtomicReference<>();
        CompletableFuture<Void> tick;
        try (LockHandle held = locks.acquire("mem:failing")) {
            tick = Background.run(() -> {
                waiting.set(Thread.currentThread());
                assertThatThrownBy(() -> job.failing(Ticks.at(2_000))).isInstanceOf(LockNotAcquiredException.class);
            });
            LockApp.await("the tick to wait for its lock", Duration.ofSeconds(30), () -> tick.isDone()
                    || waiting.get() != null && waiting.get().getState() == Thread.State.TIMED_WAITING);
            waiting.get().interrupt();
            tick.get(30, TimeUnit.SECONDS);
        }
        assertThat(locks.jobs().history("mem:failing", 10)).extracting(run -> run.tick().toEpochMilli() + " "
                + run.outcome() + " " + run.errorClass()).containsExactly(
                        "2000 NOT_ACQUIRED " + LockNotAcquiredException.class.getName(),
                        "1000 FAILED " + IllegalStateException.class.getName());
        assertThat(locks.jobs().history("mem:failing", 10).get(1).errorMessage()).isEqualTo("the report failed");
        assertThat(locks.jobs().job("mem:failing")).hasValueSatisfying(info -> {
            assertThat(info.lastOutcome()).isEqualTo(RunOutcome.FAILED);
            assertThat(info.lastFailure()).isNotNull().isEqualTo(info.lastEnded());
        });
    }

    /** A job paused and resumed in memory as in the jobs table: its ticks skipped meanwhile, each change recorded. */
    @Test
    void aJobIsPausedResumedAndRunNowInMemory() throws Exception {
        job.controlled(Ticks.at(1_000));
        assertThatThrownBy(() -> locks.jobs().pause("mem:never-ran", "ops", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("neither has this application");
        assertThat(locks.jobs().pause("mem:controlled", "alice", "maintenance").state()).isEqualTo(JobState.PAUSED);
        job.controlled(Ticks.at(2_000));
        assertThatThrownBy(() -> locks.jobs().enable("mem:controlled", "ops", null))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("resume it");
        assertThat(locks.jobs().resume("mem:controlled", "bob", null).state()).isEqualTo(JobState.ACTIVE);
        job.controlled(Ticks.at(3_000));
        assertThat(job.controlledRuns()).containsExactly("controlled@1000", "controlled@3000");
        assertThat(locks.jobs().history("mem:controlled", 10)).extracting(run -> run.tick().toEpochMilli() + " "
                + run.outcome()).containsExactly("3000 SUCCEEDED", "2000 SKIPPED_PAUSED", "1000 SUCCEEDED");
        assertThat(locks.jobs().changes("mem:controlled", 10)).extracting(change -> change.action() + " " + change.by()
                + " " + change.from() + " " + change.to()).containsExactly("RESUME bob PAUSED ACTIVE",
                        "PAUSE alice ACTIVE PAUSED");
        assertThat(locks.jobs().runNow("mem:controlled", "carol", null).toCompletableFuture().get(30,
                TimeUnit.SECONDS)).isEqualTo(RunOutcome.SUCCEEDED);
        assertThat(locks.jobs().history("mem:controlled", 1)).extracting(run -> run.kind() + " " + run.outcome())
                .containsExactly("RUN_NOW SUCCEEDED");
        assertThat(job.controlledRuns()).hasSize(3);
        assertThat(locks.jobs().changes("mem:controlled", 1)).extracting(change -> change.action() + " " + change.by())
                .containsExactly("RUN_NOW carol");
    }

    @ApplicationScoped
    public static class TickJob {
        final List<String> runs = new CopyOnWriteArrayList<>();

        final List<String> controlledRuns = new CopyOnWriteArrayList<>();

        List<String> runs() {
            return runs;
        }

        List<String> controlledRuns() {
            return controlledRuns;
        }

        @Locked("mem:tick")
        public void run(ScheduledExecution execution) {
            runs.add("run@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "mem:failing", onBusy = OnBusy.SKIP, waitFor = "30s")
        public void failing(ScheduledExecution execution) {
            throw new IllegalStateException("the report failed\nat line two");
        }

        @Locked(value = "mem:controlled", onBusy = OnBusy.SKIP)
        public void controlled(ScheduledExecution execution) {
            controlledRuns.add("controlled@" + execution.getScheduledFireTime().toEpochMilli());
        }

        @Locked(value = "mem:tick-async", onBusy = OnBusy.SKIP)
        public Uni<String> async(ScheduledExecution execution) {
            runs.add("async@" + execution.getScheduledFireTime().toEpochMilli());
            return Uni.createFrom().item("ran");
        }
    }

    @Test
    void tryWithLockAndTheLockViewWorkInMemory() throws Exception {
        assertThat(locks.tryWithLock("mem:try", () -> "ran").result()).isEqualTo("ran");
        java.util.concurrent.locks.Lock lock = locks.asLock("mem:view");
        lock.lock();
        try {
            assertThat(Background.supply(lock::tryLock).get(10, TimeUnit.SECONDS)).isFalse();
            assertThat(Background.supply(() -> locks.tryWithLock("mem:view", () -> "other").ran()).get(10,
                    TimeUnit.SECONDS)).isFalse();
        } finally {
            lock.unlock();
        }
        assertThat(Background.supply(() -> {
            boolean taken = lock.tryLock();
            if (taken) {
                lock.unlock();
            }
            return taken;
        }).get(10, TimeUnit.SECONDS)).as("free: another thread takes it").isTrue();
    }

    @Test
    void whatNeedsTheLockTableIsRefusedClearly() {
        assertThatThrownBy(() -> locks.runOnce("mem:once", () -> {
        })).isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("runOnce")
                .hasMessageContaining("in-memory").hasMessageContaining("@EmbeddedMariaDb");
        assertThatThrownBy(() -> locks.purgeUnused(Duration.ofDays(1)))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(Optional.ofNullable(((MySqlLockManager) locks).dataSourceName())).contains("<default>");
    }
}
