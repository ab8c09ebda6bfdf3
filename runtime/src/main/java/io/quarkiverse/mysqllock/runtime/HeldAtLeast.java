package io.quarkiverse.mysqllock.runtime;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;

/**
 * A hold kept until {@code atLeastFor} after a moment (its grant; a {@code @Locked} method's start): its release
 * returns at once, and the lock is given back when that time comes ({@link io.quarkiverse.mysqllock.LockOptions#holdingAtLeast}).
 * From the release on, the handle is no longer valid for its caller, and the lock kept no longer belongs to the caller's
 * thread. A cancelled asynchronous hold ({@link #abandon}) ends at once.
 */
final class HeldAtLeast implements ControlledHandle {

    private final ControlledHandle held;
    private final long grantedAt;
    private final long atLeastNanos;
    private final LateReleases later;
    private final AtomicBoolean released = new AtomicBoolean();

    HeldAtLeast(ControlledHandle held, long grantedAt, long atLeastNanos, LateReleases later) {
        this.held = held;
        this.grantedAt = grantedAt;
        this.atLeastNanos = atLeastNanos;
        this.later = later;
    }

    @Override
    public String name() {
        return held.name();
    }

    @Override
    public long fencingToken() {
        if (released.get()) {
            throw new IllegalStateException("Lock '" + held.name() + "' was released: its fencing token is no longer"
                    + " valid (the lock is kept for its atLeastFor, for nobody)");
        }
        return held.fencingToken();
    }

    @Override
    public boolean isValid() {
        return !released.get() && held.isValid();
    }

    @Override
    public LockHandle onLost(Consumer<LockLostException> listener) {
        held.onLost(listener);
        return this;
    }

    @Override
    public void release() {
        releaseReportingLoss();
    }

    @Override
    public void close() {
        release();
    }

    /** Releases now or later; the loss while it was held, found by the release itself when it happens now. */
    @Override
    public LockLostException releaseReportingLoss() {
        if (!released.compareAndSet(false, true)) {
            return held.loss();
        }
        long remaining = atLeastNanos - (System.nanoTime() - grantedAt);
        if (remaining <= 0) {
            return held.releaseReportingLoss();
        }
        held.detach();
        later.releaseIn(held, remaining);
        return held.loss();
    }

    @Override
    public LockLostException loss() {
        return held.loss();
    }

    @Override
    public void detach() {
        held.detach();
    }

    @Override
    public void abandon(String why) {
        released.set(true);
        held.abandon(why);
    }
}
