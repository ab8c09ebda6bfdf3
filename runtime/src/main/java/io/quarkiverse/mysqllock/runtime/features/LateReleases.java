package io.quarkiverse.mysqllock.runtime.features;

import java.time.Duration;
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
public final class LateReleases {

    private final ScheduledExecutorService scheduler = Executors
            .newSingleThreadScheduledExecutor(ConnectionSource.daemonThreads("mysql-lock-at-least-for-"));

    public void releaseIn(LockHandle handle, long nanos) {
        try {
            scheduler.schedule(handle::release, nanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException shutDown) {
            handle.release(); // the application is stopping: nothing is kept
        }
    }

    /** Runs {@code work} every {@code period} on this manager's thread, until shutdown. */
    public void every(Duration period, Runnable work) {
        scheduler.scheduleWithFixedDelay(work, period.toNanos(), period.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** At shutdown every pending release happens now: nothing is left held. */
    public void releaseAll() {
        for (Runnable pending : scheduler.shutdownNow()) {
            pending.run();
        }
    }
}
