package org.acme;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;

// tag::service[]
/** Exports the nightly report in chunks, on one replica at a time. */
@ApplicationScoped
public class ReportExport {

    @Inject
    LockManager locks;

    final AtomicInteger retriesScheduled = new AtomicInteger();

    /**
     * Exports under the lock {@code report:export}. If another replica holds it, this one does nothing; if the lock is
     * lost on the way (the database restarted, the network failed), the export stops before its next chunk and is
     * scheduled again: the fallback.
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

    private String scheduleRetry() {
        retriesScheduled.incrementAndGet();
        return "retry scheduled";
    }

    public int retriesScheduled() {
        return retriesScheduled.get();
    }
    // end::service[]
}
