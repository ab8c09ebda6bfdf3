package org.acme;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;

@ApplicationScoped
public class NightlyReport {

    @Inject
    LockManager locks;

    private final AtomicInteger retriesScheduled = new AtomicInteger();
    private final AtomicInteger ordersShipped = new AtomicInteger();

    /**
     * Every night at 2: every replica's scheduler fires, one replica runs it, the others skip. With the execution as a
     * parameter, each night is claimed in the lock table: a replica whose trigger fires late does not run it again.
     */
    @Scheduled(cron = "0 0 2 * * ?", identity = "nightly-report")
    @Locked(value = "cron:nightly-report", onBusy = OnBusy.SKIP)
    void nightly(ScheduledExecution execution) {
        export(10, chunk -> {
            // write one chunk of the report
        });
    }

    /** Never two shipments of one order at the same time, on any replica. */
    @Locked("order:{orderId}")
    public void ship(String orderId) {
        ordersShipped.incrementAndGet();
    }

    /**
     * Exports under the lock {@code report:export}, held through the LockManager: if another replica holds it, this one
     * does nothing; if the lock is lost on the way (the database restarted, the network failed), the export stops
     * before its next chunk and a retry is scheduled - the fallback.
     */
    public String export(int chunks, IntConsumer writeChunk) {
        var lock = locks.tryAcquire("report:export");
        if (lock.isEmpty()) {
            return "exported elsewhere";
        }
        try (LockHandle held = lock.get()) {
            for (int chunk = 0; chunk < chunks; chunk++) {
                if (!held.isValid()) {
                    return scheduleRetry();
                }
                writeChunk.accept(chunk);
            }
            return held.isValid() ? "exported" : scheduleRetry();
        }
    }

    public int retriesScheduled() {
        return retriesScheduled.get();
    }

    public int ordersShipped() {
        return ordersShipped.get();
    }

    private String scheduleRetry() {
        retriesScheduled.incrementAndGet();
        return "retry scheduled";
    }
}
