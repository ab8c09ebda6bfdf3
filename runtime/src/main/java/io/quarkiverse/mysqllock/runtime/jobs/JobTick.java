package io.quarkiverse.mysqllock.runtime.jobs;

import java.time.Instant;
import java.util.concurrent.CompletableFuture;

import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;

/**
 * What a run of a scheduled job is for: a tick its trigger fired, claimed so that it runs once across the fleet, or a
 * run asked for outside the schedule (run-now), which claims nothing and is told how it ended.
 */
public final class JobTick {

    /** For a catch-up or a queued run, 0 until it took the tick it runs for ({@link #caughtUp}). */
    private volatile long tick;
    private final RunKind kind;
    private final CompletableFuture<RunOutcome> outcome;
    /** The trigger's next fire time after this tick, as the instance that fired it saw it; null if unknown. */
    private final Instant nextFire;
    /** Whether {@link JobClaims#acquire} took it: from then on, it is told how it ended. */
    private volatile boolean taken;
    /** The job's missed-ticks policy, when it catches up; null when it skips them. */
    private volatile CatchUp catchUp;
    /** What to do once the run ended and its end is recorded; null for nothing. */
    private volatile Runnable afterEnd;
    /** What to do once the run ended, its end recorded and its lock released; null for nothing. */
    private volatile Runnable afterRelease;
    /** Whether the job queues one run when a tick fires while a run lasts ({@code overlap=queue-one}). */
    private volatile boolean queueOne;
    /** The other instance of the fleet that fires this tick ({@link #elsewhere}); null for this one. */
    private volatile String elsewhere;

    /** The runs launched once it ended. */
    private final java.util.List<JobTick> followUps = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * @param tick the scheduled fire time in epoch milliseconds (for a run-now, when it was asked for)
     * @param kind why it runs
     * @param outcome completed with how the run ended, or why it did not run; null when nobody waits for it
     */
    public JobTick(long tick, RunKind kind, CompletableFuture<RunOutcome> outcome) {
        this(tick, kind, outcome, null);
    }

    private JobTick(long tick, RunKind kind, CompletableFuture<RunOutcome> outcome, Instant nextFire) {
        this.tick = tick;
        this.kind = kind;
        this.outcome = outcome;
        this.nextFire = nextFire;
    }

    /** A tick its trigger fired. */
    public static JobTick scheduled(long tick) {
        return scheduled(tick, null);
    }

    /** A tick its trigger fired, with the trigger's next fire time after it (null if unknown). */
    public static JobTick scheduled(long tick, Instant nextFire) {
        return new JobTick(tick, RunKind.SCHEDULED, null, nextFire);
    }

    /**
     * A catch-up of a job's missed ticks ({@link RunKind#CATCH_UP}): it takes the tick it runs for once it holds the
     * job's lock. Nobody waits for it.
     */
    public static JobTick catchUp(CatchUp catchUp) {
        JobTick tick = new JobTick(0, RunKind.CATCH_UP, new CompletableFuture<>(), null);
        tick.catchUp = catchUp;
        return tick;
    }

    /**
     * A run queued while another lasted ({@link RunKind#QUEUED}): it takes the queued tick once it holds the job's lock
     * ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#takeQueued}). Nobody waits for it.
     */
    public static JobTick queued() {
        JobTick tick = new JobTick(0, RunKind.QUEUED, new CompletableFuture<>(), null);
        tick.queueOne = true;
        return tick;
    }

    /**
     * A tick that another instance of the fleet fires and runs, in no time, as the test kit's {@code JobTicks} fires
     * it: claimed, and recorded as that instance's run, without running the job here. Told how it ended.
     *
     * @param instance the other instance's name, as the history names it
     */
    public static JobTick elsewhere(long tick, String instance) {
        JobTick fired = new JobTick(tick, RunKind.SCHEDULED, new CompletableFuture<>(), null);
        fired.elsewhere = instance;
        return fired;
    }

    /** The other instance that fires this tick; null for this one. */
    public String elsewhere() {
        return elsewhere;
    }

    /** Whether the job queues one run when a tick fires while a run lasts: set for each of its runs. */
    public JobTick queueingOne(boolean queueOne) {
        if (queueOne) {
            this.queueOne = true;
        }
        return this;
    }

    boolean queuesOne() {
        return queueOne;
    }

    /** The job's missed-ticks policy, for a tick that claims (its run catches up after it) or a catch-up. */
    public JobTick catchingUp(CatchUp catchUp) {
        if (this.catchUp == null) {
            this.catchUp = catchUp;
        }
        return this;
    }

    /** The job's missed-ticks policy; null when it skips them. */
    CatchUp catchUp() {
        return catchUp;
    }

    /** A catch-up's or queued run's tick, once taken. */
    void caughtUp(long tick) {
        this.tick = tick;
    }

    /** Once the run ended, its end recorded and its lock released (after its {@code atLeastFor}), runs {@code next}. */
    void afterRelease(Runnable next) {
        this.afterRelease = next;
    }

    /** The run ended, its end is recorded and its lock released. */
    void released() {
        Runnable next = afterRelease;
        afterRelease = null;
        if (next != null) {
            next.run();
        }
    }

    /** Once the run ended and its end is recorded, runs {@code next} (after what was set to run then before it). */
    synchronized void afterEnd(Runnable next) {
        Runnable before = afterEnd;
        this.afterEnd = before == null ? next : () -> {
            before.run();
            next.run();
        };
    }

    /** The trigger's next fire time after this tick; null if unknown. */
    public Instant nextFire() {
        return nextFire;
    }

    public long tick() {
        return tick;
    }

    public RunKind kind() {
        return kind;
    }

    /** How the run ended; null when nobody waits for it. */
    public CompletableFuture<RunOutcome> outcome() {
        return outcome;
    }

    /**
     * Whether the run got as far as its claim and lock: then it is told how it ended, or why it did not run. A run
     * that was not (its call failed before) is not.
     */
    public boolean taken() {
        return taken;
    }

    /** Whether its tick is claimed in the jobs table first (a fired tick), or it just runs (a run-now). */
    boolean claims() {
        return kind == RunKind.SCHEDULED;
    }

    void take() {
        taken = true;
    }

    /**
     * Tells whoever waits how the run ended (null: it was not this instance's to run), once what comes after it is
     * launched ({@link #afterEnd}).
     */
    void told(RunOutcome how) {
        Runnable next;
        synchronized (this) {
            next = afterEnd;
            afterEnd = null;
        }
        if (next != null) {
            next.run();
        }
        if (outcome != null) {
            outcome.complete(how);
        }
    }

    /** A run launched once this one ended (its catch-up): {@link #settled} waits for it too. */
    void followedBy(JobTick next) {
        followUps.add(next);
    }

    /**
     * Completed once the run ended and every run launched after it (the catch-ups it launched, and theirs) ended too;
     * completed exceptionally as {@link #outcome} is.
     */
    public CompletableFuture<Void> settled() {
        if (outcome == null) {
            return CompletableFuture.completedFuture(null);
        }
        return outcome.thenCompose(ignored -> CompletableFuture.allOf(followUps.stream().map(JobTick::settled)
                .toArray(CompletableFuture[]::new)));
    }

    /** For a tick fired outside the scheduler, of an {@code every} job: the start of the interval it falls in. */
    public JobTick inInterval(long intervalMillis) {
        if (kind == RunKind.SCHEDULED && intervalMillis > 0) {
            tick = Math.floorDiv(tick, intervalMillis) * intervalMillis;
        }
        return this;
    }
}
