package io.quarkiverse.mysqllock.runtime.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

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
    /** Every piece of work, each run under its own lock: a run on demand never overlaps a scheduled one. */
    private final List<Runnable> works = new CopyOnWriteArrayList<>();
    /** Set by the test kit (quarkus-mysql-lock-test): the scheduled runs are skipped, as a stalled process's are. */
    private volatile boolean paused;

    /** @param threads how many pieces of work may run at once (a stalled one then delays no other) */
    public PeriodicWork(String threadPrefix, int threads) {
        this.executor = Executors.newScheduledThreadPool(threads, ConnectionSource.daemonThreads(threadPrefix));
    }

    /** Runs {@code work} every {@code periodNanos} after the end of its last run, the first after {@code delayNanos}. */
    public void every(long delayNanos, long periodNanos, String what, Runnable work) {
        every(delayNanos, periodNanos, what, work, true);
    }

    /**
     * The same, for work that a {@link #pause} does not stop: a check made with this process's own clock (a stall of
     * the database or of the network does not stop the holder from seeing its lease run out).
     */
    public void everyUnpaused(long delayNanos, long periodNanos, String what, Runnable work) {
        every(delayNanos, periodNanos, what, work, false);
    }

    private void every(long delayNanos, long periodNanos, String what, Runnable work, boolean pausable) {
        // The first failure after a run that succeeded is logged with its cause; the next ones, which may come every
        // few milliseconds while a fault lasts, at debug level.
        AtomicBoolean failing = new AtomicBoolean();
        ReentrantLock oneAtATime = new ReentrantLock();
        Runnable guarded = () -> {
            oneAtATime.lock();
            try {
                work.run();
            } finally {
                oneAtATime.unlock();
            }
        };
        works.add(guarded);
        executor.scheduleWithFixedDelay(() -> {
            if (pausable && paused) {
                return;
            }
            try {
                guarded.run();
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

    /**
     * For tests only (the test kit): skips the scheduled runs while paused, as when the database does not answer
     * (renewals, keepalive checks and membership renewals do not happen; checks by this process's own clock go on);
     * resuming lets the next ones come on time.
     */
    public void pause(boolean pause) {
        this.paused = pause;
    }

    /**
     * For tests only (the test kit): runs every piece of work once now on the caller's thread, each after any
     * scheduled run of it under way, so that a loss caused by a test is found now rather than at the next period (paused
     * work too). Every piece runs, whatever the others do.
     *
     * @throws RuntimeException the first failure of a piece of work, the others suppressed in it
     */
    public void runNow() {
        RuntimeException first = null;
        for (Runnable work : works) {
            try {
                work.run();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Stops the work and interrupts any run under way (shutdown). */
    public void shutdownNow() {
        executor.shutdownNow();
    }
}
