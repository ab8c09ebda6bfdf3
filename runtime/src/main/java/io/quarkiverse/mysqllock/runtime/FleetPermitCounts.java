package io.quarkiverse.mysqllock.runtime;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.DistributedSemaphore;
import io.quarkiverse.mysqllock.runtime.coordination.PermitCounts;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.features.TableRecords;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;

/**
 * The fleet's number of permits of each semaphore ({@code ~permits:<name>}) and of readers of each read-write lock
 * ({@code ~readers:<name>}), in reserved rows of the lock table ({@link LockNames#recordRow}), or the in-memory engine's
 * memory where there is no database. An instance asking for another number of permits than the stored one gets the
 * stored one, and says so once per semaphore and number.
 */
final class FleetPermitCounts implements PermitCounts {

    private static final Logger LOG = Logger.getLogger(FleetPermitCounts.class);

    private final TableRecords records;
    private final Supplier<LockEngine> engine;
    private final LockNames names;
    /** Refuses a blocking call on an event-loop thread, naming the method. */
    private final Consumer<String> blockingCheck;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /** @param records the lock table's records, null where there is none (the in-memory engine) */
    FleetPermitCounts(TableRecords records, Supplier<LockEngine> engine, LockNames names, Consumer<String> blockingCheck) {
        this.records = records;
        this.engine = engine;
        this.names = names;
        this.blockingCheck = blockingCheck;
    }

    @Override
    public int permits(String name, Kind kind, int proposed) {
        blockingCheck.accept(kind == Kind.PERMITS ? "semaphore(...) acquisitions" : "readWriteLock(...) acquisitions");
        String row = row(name, kind);
        int stored = checked(name, kind, () -> records == null && engine.get() instanceof InMemoryEngine memory
                ? memory.permits(row, proposed)
                : records(name).permits(name, row, proposed));
        if (kind == Kind.PERMITS && stored != proposed && warned.add(name + '\n' + proposed)) {
            LOG.warnf("Semaphore '%s' is asked for with %d permits here, but the fleet's number, stored in the lock"
                    + " table when it was first used, is %d: %d is used. Change it deliberately with"
                    + " DistributedSemaphore.changePermits.", name, proposed, stored, stored);
        }
        return stored;
    }

    @Override
    public int change(String name, Kind kind, int permits) {
        blockingCheck.accept(kind == Kind.PERMITS ? "DistributedSemaphore.changePermits"
                : "DistributedReadWriteLock.raiseMaxReaders");
        String row = row(name, kind);
        boolean onlyUpward = kind == Kind.READERS;
        int stored = checked(name, kind, () -> records == null && engine.get() instanceof InMemoryEngine memory
                ? memory.changePermits(row, permits, onlyUpward)
                : records(name).changePermits(name, row, permits, onlyUpward));
        LOG.infof("%s '%s' now has %d %s for the fleet", kind == Kind.PERMITS ? "Semaphore" : "Read-write lock", name,
                stored, kind == Kind.PERMITS ? "permits" : "readers");
        return stored;
    }

    private String row(String name, Kind kind) {
        return names.recordRow(kind == Kind.PERMITS ? "permits" : "readers", name);
    }

    /**
     * The number read or stored by {@code access}; a failure to, or a number outside 1 to the most permits a semaphore
     * has (not written by this extension), is {@link Unreadable}.
     */
    private static int checked(String name, Kind kind, IntSupplier access) {
        String what = (kind == Kind.PERMITS ? "permits of semaphore '" : "readers of read-write lock '") + name + "'";
        int stored;
        try {
            stored = access.getAsInt();
        } catch (IllegalStateException e) {
            throw new Unreadable("The number of " + what + " could not be read from the lock table: " + e.getMessage(), e);
        }
        if (stored < 1 || stored > DistributedSemaphore.MAX_PERMITS) {
            throw new Unreadable("The lock table holds " + stored + " as the number of " + what + ", which is no number"
                    + " of permits (1 to " + DistributedSemaphore.MAX_PERMITS + "): its row was changed outside the"
                    + " extension", null);
        }
        return stored;
    }

    private TableRecords records(String name) {
        if (records == null) {
            throw new UnsupportedOperationException("'" + name + "' keeps its number of permits in the lock table, and"
                    + " this lock manager has none");
        }
        return records;
    }
}
