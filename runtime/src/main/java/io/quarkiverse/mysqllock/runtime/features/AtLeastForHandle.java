package io.quarkiverse.mysqllock.runtime.features;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandleDecorator;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * A hold kept until {@code atLeastFor} after a moment (its grant; a {@code @Locked} method's start): its release
 * returns without waiting for that time (a release that reports the loss first confirms the lock is still held), and
 * the lock is given back when that time comes
 * ({@link io.quarkiverse.mysqllock.LockOptions#holdingAtLeast}).
 * From the release on, the handle is no longer valid for its caller, and the lock kept no longer belongs to the caller's
 * thread. A cancelled asynchronous hold ({@link #abandon}) ends at once.
 */
public final class AtLeastForHandle extends ControlledHandleDecorator {

    private final long grantedAt;
    private final long atLeastNanos;
    private final LateReleases later;
    private final AtomicBoolean released = new AtomicBoolean();

    public AtLeastForHandle(ControlledHandle held, long grantedAt, long atLeastNanos, LateReleases later) {
        super(held);
        this.grantedAt = grantedAt;
        this.atLeastNanos = atLeastNanos;
        this.later = later;
    }

    @Override
    public long fencingToken() {
        if (released.get()) {
            throw new IllegalStateException("Lock '" + handle.name() + "' was released: its fencing token is no longer"
                    + " valid (the lock is kept for its atLeastFor, for nobody)");
        }
        return handle.fencingToken();
    }

    @Override
    public boolean extend(Duration atMostFor) {
        if (released.get()) {
            throw new IllegalStateException("Lock '" + handle.name() + "' was released: it cannot be extended (the lock"
                    + " is kept for its atLeastFor, for nobody)");
        }
        return handle.extend(atMostFor);
    }

    @Override
    public boolean confirmedWithin(long nanos) {
        return !released.get() && handle.confirmedWithin(nanos);
    }

    @Override
    public boolean confirm(long sinceNanos) {
        return !released.get() && handle.confirm(sinceNanos);
    }

    @Override
    public boolean isValid() {
        return !released.get() && handle.isValid();
    }

    /** Releases now, or schedules the release: the public {@code release()}, which reports no loss, asks nothing more. */
    @Override
    public void release() {
        releaseOrSchedule(false);
    }

    /**
     * Releases now or later; the loss while it was held, found by the release itself when it happens now, and otherwise
     * by a confirmation that the lock is still held now (a NAMED session checked on the server, a lease's validity as
     * this instance knows it), so that the caller hears of a loss during its work as an immediate release would have
     * told it. On an event loop, where nothing may block, the loss known so far.
     */
    @Override
    public LockLostException releaseReportingLoss() {
        return releaseOrSchedule(true);
    }

    private LockLostException releaseOrSchedule(boolean confirm) {
        if (!released.compareAndSet(false, true)) {
            return handle.loss();
        }
        if (atLeastNanos - (System.nanoTime() - grantedAt) <= 0) {
            return handle.releaseReportingLoss();
        }
        try {
            if (confirm && BlockingOperationControl.isBlockingAllowed()) {
                handle.confirm(System.nanoTime());
            }
        } finally {
            // whatever the confirmation did, the lock goes back: now if atLeastFor passed meanwhile, else later
            handle.detach();
            later.releaseIn(handle, Math.max(0, atLeastNanos - (System.nanoTime() - grantedAt)));
        }
        return handle.loss();
    }

    @Override
    public void abandon(String why) {
        released.set(true);
        handle.abandon(why);
    }

    /**
     * Releases locks whose {@code atLeastFor} has not passed yet when their holder lets go, on one thread per manager
     * (started at the first such release).
     */
    public static final class LateReleases {

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
}
