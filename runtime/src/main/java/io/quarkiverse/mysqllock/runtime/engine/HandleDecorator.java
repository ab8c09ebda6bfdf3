package io.quarkiverse.mysqllock.runtime.engine;

import java.time.Duration;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;

/**
 * A handle that adds to another one: whatever a subclass does not override goes to the handle it wraps;
 * {@link #onLost} returns this handle, {@link #close()} is {@link #release()}, and {@link #parts()} is this handle
 * (a subclass that stands for several locks forwards it).
 */
public abstract class HandleDecorator<H extends LockHandle> implements LockHandle {

    protected final H handle;

    protected HandleDecorator(H handle) {
        this.handle = handle;
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
    public boolean extend(Duration atMostFor) {
        return handle.extend(atMostFor);
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
