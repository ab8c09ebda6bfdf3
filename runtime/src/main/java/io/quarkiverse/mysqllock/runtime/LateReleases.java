package io.quarkiverse.mysqllock.runtime;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;

/**
 * Releases locks whose {@code atLeastFor} has not passed yet when their holder lets go, on one thread per manager
 * (started at the first such release).
 */
final class LateReleases {

    private final ScheduledExecutorService scheduler = Executors
            .newSingleThreadScheduledExecutor(ConnectionSource.daemonThreads("mysql-lock-at-least-for-"));

    void releaseIn(LockHandle handle, long nanos) {
        try {
            scheduler.schedule(handle::release, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException shutDown) {
            handle.release(); // the application is stopping: nothing is kept
        }
    }

    /** At shutdown every pending release happens now: nothing is left held. */
    void releaseAll() {
        for (Runnable pending : scheduler.shutdownNow()) {
            pending.run();
        }
    }
}
