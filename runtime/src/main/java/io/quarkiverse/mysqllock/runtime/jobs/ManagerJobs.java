package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.jobs.FleetJobs;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkus.arc.Arc;

/**
 * A lock manager's scheduled jobs, in its namespace: the lock of each run with its tick claimed, the fleet's view of the
 * jobs, their silences, how much history to keep, and the audit of locks released by force from outside.
 */
public final class ManagerJobs {

    private final JobClaims claims;
    private final Function<String, String> serverNames;
    private final Function<String, String> tickRows;
    private final Consumer<String> checkBlockingAllowed;
    private final Supplier<String> dataSource;

    /**
     * @param serverNames a job's name as the server knows it (its row's key), checked as a lock name is
     * @param tickRows a job's tick row, where versions before the jobs table claimed its ticks
     * @param checkBlockingAllowed throws, naming the call it is given, on an event loop
     * @param dataSource the manager's datasource, whose jobs it runs now
     */
    public ManagerJobs(JobClaims claims, Function<String, String> serverNames, Function<String, String> tickRows,
            Consumer<String> checkBlockingAllowed, Supplier<String> dataSource) {
        this.claims = claims;
        this.serverNames = serverNames;
        this.tickRows = tickRows;
        this.checkBlockingAllowed = checkBlockingAllowed;
        this.dataSource = dataSource;
        claims.launchCatchUpsWith((name, tick) -> {
            JobLauncher launcher = launcher();
            if (launcher == null) {
                tick.outcome().complete(null); // no job here to run: nothing to wait for
            } else {
                launcher.launch(dataSource.get(), name, tick);
            }
        });
    }

    /** Where the runs of jobs, and their silences, are measured. */
    public void measure(LockMetrics metrics) {
        claims.measure(metrics);
    }

    /** How much of each job's history to keep ({@code quarkus.mysql-lock.job-history.*}). */
    public void retain(HistoryRetention retention) {
        claims.retain(retention);
    }

    /**
     * How long each job has gone without a success anywhere in the fleet, by job name: read from the jobs table on the
     * server's clock (blocking), or kept from a read a few seconds ago.
     */
    public Map<String, JobSilences.Silence> silences() {
        checkBlockingAllowed.accept("jobSilences() (reading the jobs table)");
        return claims.silences().read();
    }

    /**
     * The lock of a scheduled method's run, with its tick claimed ({@link JobClaims#acquire}). It waits at least
     * {@link JobClaims#LATE_TRIGGER_GRACE} for the lock, which an instance firing an older tick late may hold; a queued
     * run waits for none ({@link QueuedRuns}).
     *
     * @param lock the engine's acquisition
     */
    public ControlledHandle lock(String name, LockRequest request, JobTick tick,
            Function<LockRequest, ControlledHandle> lock) {
        long waitNanos = tick.kind() == RunKind.QUEUED ? 0
                : Math.max(request.waitNanos(), JobClaims.LATE_TRIGGER_GRACE.toNanos());
        LockRequest waiting = request.waitNanos() == waitNanos ? request
                : new LockRequest(request.lock(), waitNanos, request.whenBusy(), request.owner(),
                        request.atMostForNanos());
        return claims.acquire(name, request.lock().serverName(), tickRows.apply(name), tick,
                () -> lock.apply(waiting));
    }

    /** The application shuts down: no run of a job starts here any more ({@link JobClaims#stop}). */
    public void stop() {
        claims.stop();
    }

    /** The fleet's jobs, read and changed from this manager. */
    public FleetJobs view() {
        return claims.view(serverNames, tickRows, () -> checkBlockingAllowed.accept("jobs() (reading the jobs tables)"),
                dataSource.get(), ManagerJobs::launcher);
    }

    /** What runs a job of this application outside its schedule; null where the application has no job. */
    private static JobLauncher launcher() {
        return Arc.container().instance(JobLauncher.class).get();
    }

    /**
     * A forced release of lock {@code name}, recorded in the audit trail with who asked and why.
     *
     * @return whether a holder's lock was released
     * @throws IllegalStateException if the release was made but could not be recorded
     */
    public boolean forceRelease(String name, String by, String why, BooleanSupplier release) {
        boolean released = release.getAsBoolean();
        try {
            claims.audit("FORCE_RELEASE", serverNames.apply(name), name, by, why, released ? "released" : "no lease held");
        } catch (RuntimeException e) {
            throw new IllegalStateException("Lock '" + name + "' was " + (released ? "" : "not ") + "released, and"
                    + " that could not be recorded in the audit trail: " + e.getMessage(), e);
        }
        return released;
    }
}
