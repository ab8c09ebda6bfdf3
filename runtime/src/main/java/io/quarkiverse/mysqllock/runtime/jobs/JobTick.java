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

    private final long tick;
    private final RunKind kind;
    private final CompletableFuture<RunOutcome> outcome;
    /** The trigger's next fire time after this tick, as the instance that fired it saw it; null if unknown. */
    private final Instant nextFire;
    /** Whether {@link JobClaims#acquire} took it: from then on, it is told how it ended. */
    private volatile boolean taken;

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

    /** Tells whoever waits how the run ended. */
    void told(RunOutcome how) {
        if (outcome != null) {
            outcome.complete(how);
        }
    }
}
