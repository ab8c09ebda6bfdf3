package io.quarkiverse.mysqllock.runtime.metrics;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;

/** A handle that reports its hold time when it is first released. */
final class MeteredHandle implements ControlledHandle {

    private final ControlledHandle handle;
    private final LockMetrics metrics;
    private final LockMode engine;
    private final long since = System.nanoTime();
    private final AtomicBoolean released = new AtomicBoolean();

    MeteredHandle(ControlledHandle handle, LockMetrics metrics, LockMode engine) {
        this.handle = handle;
        this.metrics = metrics;
        this.engine = engine;
    }

    @Override
    public String name() {
        return handle.name();
    }

    @Override
    public long fencingToken() {
        return handle.fencingToken();
    }

    @Override
    public boolean isValid() {
        return handle.isValid();
    }

    @Override
    public LockHandle onLost(Consumer<LockLostException> listener) {
        handle.onLost(listener);
        return this;
    }

    @Override
    public void release() {
        heldUntilNow();
        handle.release();
    }

    private void heldUntilNow() {
        if (released.compareAndSet(false, true)) {
            metrics.held(engine, System.nanoTime() - since);
        }
    }

    @Override
    public LockLostException releaseReportingLoss() {
        release();
        return handle.releaseReportingLoss();
    }

    @Override
    public LockLostException loss() {
        return handle.loss();
    }

    @Override
    public void detach() {
        handle.detach();
    }

    @Override
    public void abandon(String why) {
        heldUntilNow();
        handle.abandon(why);
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return handle.toString();
    }
}
