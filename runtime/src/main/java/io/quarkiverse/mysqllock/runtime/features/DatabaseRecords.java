package io.quarkiverse.mysqllock.runtime.features;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.jobs.JobClaims;
import io.quarkiverse.mysqllock.runtime.memory.InMemoryEngine;

/**
 * What a manager keeps in its database beside the locks: runs done once ({@code runOnce}), unused rows to purge, locks
 * that end with a transaction, the ticks of scheduled methods. The in-memory engine has no database: it keeps ticks
 * itself and refuses the rest.
 */
public final class DatabaseRecords {

    private final TableRecords records;
    private final TransactionScopedLocks transactionLocks;
    private final Supplier<LockEngine> engine;
    private final JobClaims ticks;

    /** @param records the lock table's records and {@code transactionLocks} null for the in-memory engine */
    /**
     * @param worker where the end of a job's run ending on an event loop is recorded
     * @param ours whether a jobs table row's key is of this manager's namespace
     */
    public DatabaseRecords(TableRecords records, TransactionScopedLocks transactionLocks, Supplier<LockEngine> engine,
            Executor worker, Predicate<String> ours) {
        this.records = records;
        this.transactionLocks = transactionLocks;
        this.engine = engine;
        this.ticks = new JobClaims(records == null ? null : records.jobs(), engine, worker, ours);
    }

    public JobClaims ticks() {
        return ticks;
    }

    public void acquireForTransaction(String name, String serverName, long waitNanos) {
        if (transactionLocks == null) {
            throw TableRecords.databaseOnly("acquireForTransaction");
        }
        transactionLocks.acquire(name, serverName, Duration.ofNanos(waitNanos));
    }

    public long purgeUnused(Duration unusedFor) {
        return records("purgeUnused").purgeUnused(unusedFor);
    }

    public boolean runOnce(String name, String serverName, Runnable action, Supplier<ControlledHandle> lock) {
        return records("runOnce").run(name, serverName, action, lock);
    }

    /** The datasource the locks are in. */
    public String dataSourceName() {
        if (records == null && engine.get() instanceof InMemoryEngine memory) {
            return memory.dataSourceName();
        }
        return records.dataSourceName();
    }

    private TableRecords records(String what) {
        if (records == null) {
            throw TableRecords.databaseOnly(what);
        }
        return records;
    }
}
