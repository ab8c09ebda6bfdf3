package io.quarkiverse.mysqllock.runtime.locked;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;

/** Releases locks whose {@code atLeastFor} has not passed yet when their method returns, on one shared thread. */
@Singleton
public class LateReleases {

    private final ScheduledExecutorService scheduler = Executors
            .newSingleThreadScheduledExecutor(ConnectionSource.daemonThreads("mysql-lock-at-least-for-"));

    void releaseIn(LockHandle handle, long nanos) {
        scheduler.schedule(handle::release, nanos, TimeUnit.NANOSECONDS);
    }

    /** At shutdown every pending release happens now: nothing is left held. */
    @PreDestroy
    void releaseAll() {
        for (Runnable pending : scheduler.shutdownNow()) {
            pending.run();
        }
    }
}
