package io.quarkiverse.mysqllock.runtime;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;

/** A handle that reports its hold time when it is first released. */
final class MeteredHandle implements LockHandle {

    private final LockHandle handle;
    private final LockMetrics metrics;
    private final LockMode engine;
    private final long since = System.nanoTime();
    private final AtomicBoolean released = new AtomicBoolean();

    MeteredHandle(LockHandle handle, LockMetrics metrics, LockMode engine) {
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
        if (released.compareAndSet(false, true)) {
            metrics.held(engine, System.nanoTime() - since);
        }
        handle.release();
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
