package io.quarkiverse.mysqllock.runtime.memory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.quarkiverse.mysqllock.runtime.table.JobClaim;
import io.quarkiverse.mysqllock.runtime.table.TickRows;

/**
 * The in-memory engine's jobs table: each job's ticks and state, claimed by the rule of the jobs table
 * ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#claim}). One per datasource name, shared by every in-memory
 * manager of the JVM, as the engine's locks are.
 */
public final class MemoryJobs {

    private static final Map<String, MemoryJobs> SERVERS = new ConcurrentHashMap<>();

    private final Map<String, Row> rows = new ConcurrentHashMap<>();

    private MemoryJobs() {
    }

    static MemoryJobs of(String dataSourceName) {
        return SERVERS.computeIfAbsent(dataSourceName, ignored -> new MemoryJobs());
    }

    /** A job's row, guarded by its own monitor. */
    private static final class Row {
        int stateCode = 1;
        long latest;
        long settled;
    }

    /** Claims one tick of a job ({@link io.quarkiverse.mysqllock.runtime.table.JobTable#claim}). */
    public JobClaim claim(String serverName, long tick) {
        Row row = rows.computeIfAbsent(serverName, ignored -> new Row());
        synchronized (row) {
            if (!TickRows.claimable(tick, row.latest, row.settled)) {
                return JobClaim.TAKEN;
            }
            long previous = row.latest;
            if (tick > row.latest) {
                row.settled = row.latest;
                row.latest = tick;
            } else {
                row.settled = tick;
            }
            return JobClaim.claimed(row.stateCode, previous);
        }
    }
}
