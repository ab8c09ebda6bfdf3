package io.quarkiverse.mysqllock.runtime.engine;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;

/**
 * An engine's periodic work (keepalive checks, renewals, expiry checks), which never stops by itself: a JDK periodic
 * task that throws is never run again, and a keepalive or a renewal that stopped silently would leave every later loss
 * unreported. A failure of one run is logged and the next run comes on time.
 */
public final class PeriodicWork {

    private static final Logger LOG = Logger.getLogger(PeriodicWork.class);

    private final ScheduledExecutorService executor;

    /** @param threads how many pieces of work may run at once (a stalled one then delays no other) */
    public PeriodicWork(String threadPrefix, int threads) {
        this.executor = Executors.newScheduledThreadPool(threads, ConnectionSource.daemonThreads(threadPrefix));
    }

    /** Runs {@code work} every {@code periodNanos} after the end of its last run, the first after {@code delayNanos}. */
    public void every(long delayNanos, long periodNanos, String what, Runnable work) {
        // The first failure after a run that succeeded is logged with its cause; the next ones, which may come every
        // few milliseconds while a fault lasts, at debug level.
        AtomicBoolean failing = new AtomicBoolean();
        executor.scheduleWithFixedDelay(() -> {
            try {
                work.run();
                failing.set(false);
            } catch (Throwable e) {
                if (executor.isShutdown()) {
                    return; // interrupted by the shutdown
                }
                if (failing.compareAndSet(false, true)) {
                    LOG.errorf(e, "The lock engine's %s failed; it runs again in %d ms (further failures in a row are"
                            + " logged at debug level)", what, TimeUnit.NANOSECONDS.toMillis(periodNanos));
                } else {
                    LOG.debugf(e, "The lock engine's %s failed again", what);
                }
            }
        }, delayNanos, periodNanos, TimeUnit.NANOSECONDS);
    }

    /** Stops the work and interrupts any run under way (shutdown). */
    public void shutdownNow() {
        executor.shutdownNow();
    }
}
