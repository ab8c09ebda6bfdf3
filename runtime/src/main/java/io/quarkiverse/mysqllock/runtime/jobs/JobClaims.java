package io.quarkiverse.mysqllock.runtime.jobs;

import java.time.Duration;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;
import io.quarkiverse.mysqllock.runtime.table.JobTable;

/**
 * The ticks of scheduled jobs (exclusive {@code @Locked} methods with a {@code ScheduledExecution} parameter): each
 * tick (the trigger's scheduled fire time, not the time it fired) runs on one instance, whatever the instances' clocks.
 * The first instance to fire a tick claims it in the jobs table ({@link JobTable#claim}, one statement, which is all the
 * others send), then takes the job's lock for its run: the lock keeps runs from overlapping, the claim keeps a tick
 * from running twice.
 */
public final class JobClaims {

    /**
     * How long a tick waits for its lock at least, whatever its {@code waitFor}: Quarkus checks triggers once a second,
     * so an instance can fire a tick up to a second late, and its run of tick N then holds the lock when another claims
     * tick N + 1. Skipping N + 1 at once would leave a tick nobody ran; it waits for the older run to end instead (and
     * is skipped, or fails, as before when the lock stays busy: a run of a tick that still lasts).
     */
    public static final Duration LATE_TRIGGER_GRACE = Duration.ofSeconds(1);

    /**
     * The lock table row where versions before the jobs table kept a job's ticks is named after its lock, with this
     * prefix: no lock may have a name that begins with it ({@code LockNames.requireValid}).
     */
    public static final String ROW_PREFIX = "tick@";

    private final DatabaseJobs database;
    private final Supplier<LockEngine> engine;

    /** @param database the jobs table, null for the in-memory engine (then {@code engine} is it) */
    public JobClaims(DatabaseJobs database, Supplier<LockEngine> engine) {
        this.database = database;
        this.engine = engine;
    }

    /**
     * The lock of a run: nothing (null) when another instance claimed this tick (or it is settled, or the job is paused
     * or disabled), else the lock, taken after the claim (null when it stays busy: the tick is skipped).
     *
     * @param name the job's lock name, as the application wrote it
     * @param serverName the job's lock name on the server: its row in the jobs table
     * @param tickRow the lock table row where versions before the jobs table claim the job's ticks
     * @param tick the scheduled fire time of this run in epoch milliseconds
     */
    public ControlledHandle acquire(String name, String serverName, String tickRow, long tick,
            Supplier<ControlledHandle> lock) {
        return claim(name, serverName, tickRow, tick).kind() == JobClaim.Kind.RUN ? lock.get() : null;
    }

    private JobClaim claim(String name, String serverName, String tickRow, long tick) {
        if (database == null && engine.get() instanceof InMemoryEngine memory) {
            return memory.jobs().claim(serverName, tick);
        }
        if (database == null) {
            throw new IllegalStateException("No jobs table for '" + name + "'");
        }
        return database.claim(name, serverName, tickRow, tick);
    }
}
