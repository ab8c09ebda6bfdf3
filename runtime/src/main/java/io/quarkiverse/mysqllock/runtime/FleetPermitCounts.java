package io.quarkiverse.mysqllock.runtime;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.runtime.coordination.PermitCounts;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;

/**
 * The fleet's number of permits of each semaphore, in the lock table's row {@code permits@<semaphore>} (in the
 * in-memory engine's memory where there is no database). An instance asking for another number than the stored one
 * gets the stored one, and says so once per semaphore and number.
 */
final class FleetPermitCounts implements PermitCounts {

    private static final Logger LOG = Logger.getLogger(FleetPermitCounts.class);

    /** The lock table row of a semaphore's number of permits is named after it, with this prefix. */
    static final String PERMITS_ROW_PREFIX = "permits@";

    private final TableRecords records;
    private final Supplier<LockEngine> engine;
    private final LockNames names;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /** @param records the lock table's records, null where there is none (the in-memory engine) */
    FleetPermitCounts(TableRecords records, Supplier<LockEngine> engine, LockNames names) {
        this.records = records;
        this.engine = engine;
        this.names = names;
    }

    @Override
    public int permits(String semaphore, int proposed) {
        String row = names.serverName(PERMITS_ROW_PREFIX + semaphore);
        int stored = records == null && engine.get() instanceof InMemoryEngine memory ? memory.permits(row, proposed)
                : records(semaphore).permits(semaphore, row, proposed);
        if (stored != proposed && warned.add(semaphore + '\n' + proposed)) {
            LOG.warnf("Semaphore '%s' is asked for with %d permits here, but the fleet's number, stored in the lock"
                    + " table when it was first used, is %d: %d is used. Change it deliberately with"
                    + " DistributedSemaphore.changePermits (or raiseMaxReaders for a read-write lock's readers).",
                    semaphore, proposed, stored, stored);
        }
        return stored;
    }

    @Override
    public int change(String semaphore, int permits, boolean onlyUpward) {
        String row = names.serverName(PERMITS_ROW_PREFIX + semaphore);
        int stored = records == null && engine.get() instanceof InMemoryEngine memory
                ? memory.changePermits(row, permits, onlyUpward)
                : records(semaphore).changePermits(semaphore, row, permits, onlyUpward);
        LOG.infof("Semaphore '%s' now has %d permits for the fleet", semaphore, stored);
        return stored;
    }

    private TableRecords records(String semaphore) {
        if (records == null) {
            throw new UnsupportedOperationException("Semaphore '" + semaphore + "' keeps its number of permits in the"
                    + " lock table, and this lock manager has none");
        }
        return records;
    }
}
