package io.quarkiverse.mysqllock.runtime.features;

import java.util.function.Supplier;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;
import io.quarkiverse.mysqllock.runtime.table.TickRows;

/**
 * The ticks of exclusive {@code @Locked} scheduled methods with a {@code ScheduledExecution} parameter: each tick (the
 * trigger's scheduled fire time, not the time it fired) runs on one instance, whatever the instances' clocks. A tick is
 * claimed in the lock table (row {@code tick@<lock>}), or in the in-memory engine's memory, while its lock is held.
 */
public final class TickClaims {

    /**
     * How long a tick waits for its lock at least, whatever its {@code waitFor}: Quarkus checks triggers once a second,
     * so an instance can fire a tick up to a second late, and its run of tick N then holds the lock when the others fire
     * tick N + 1. Skipping N + 1 at once would leave a tick nobody ran; it waits for the older run to end instead (and
     * is skipped, or fails, as before when the lock stays busy: a run of a tick that still lasts).
     */
    public static final java.time.Duration LATE_TRIGGER_GRACE = java.time.Duration.ofSeconds(1);

    /**
     * The lock table row of a scheduled job's last tick is named after its lock, with this prefix: no lock may have a
     * name that begins with it ({@code LockNames.requireValid}).
     */
    public static final String ROW_PREFIX = "tick@";

    private final TableRecords records;
    private final Supplier<LockEngine> engine;

    /** @param records the lock table's records, null for the in-memory engine (then {@code engine} is it) */
    public TickClaims(TableRecords records, Supplier<LockEngine> engine) {
        this.records = records;
        this.engine = engine;
    }

    /**
     * The lock of a run: nothing (null) when this tick already ran (or is settled, {@link TickRows#claimable}), else the
     * lock with the tick claimed (null, the lock released, when another instance claimed it meanwhile).
     * A tick known to have run takes no lock: an instance whose trigger fires late would otherwise hold the lock while
     * it learns so, and the others, firing the next tick meanwhile, would find it busy and skip a tick nobody ran.
     *
     * @param tick the scheduled fire time of this run in epoch milliseconds
     */
    public ControlledHandle acquire(String name, String tickRow, long tick, Supplier<ControlledHandle> lock) {
        return ran(name, tickRow, tick) ? null : claim(name, tickRow, lock.get(), tick);
    }

    /** Whether this tick was claimed already, or is settled ({@link TickRows#claimable}): read without the lock. */
    public boolean ran(String name, String tickRow, long tick) {
        if (records == null && engine.get() instanceof InMemoryEngine memory) {
            return memory.tickClaimed(tickRow, tick);
        }
        return records().tickClaimed(name, tickRow, tick);
    }

    /**
     * Claims the tick with its lock held: the handle, or null with the lock released when this tick ran already (or is
     * settled); null for a null handle (the lock was busy).
     */
    public <H extends LockHandle> H claim(String name, String tickRow, H handle, long tick) {
        if (handle == null) {
            return null;
        }
        boolean claimed;
        try {
            claimed = records == null && engine.get() instanceof InMemoryEngine memory
                    ? memory.claimTick(tickRow, tick)
                    : records().claimTick(name, tickRow, tick);
        } catch (RuntimeException e) {
            handle.release();
            throw e;
        }
        if (!claimed) {
            handle.release();
            return null;
        }
        return handle;
    }

    private TableRecords records() {
        if (records == null) {
            throw TableRecords.databaseOnly("a @Scheduled method's tick claim");
        }
        return records;
    }
}
