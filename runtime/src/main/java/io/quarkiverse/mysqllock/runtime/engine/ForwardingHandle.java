package io.quarkiverse.mysqllock.runtime.engine;

import java.time.Duration;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;

/**
 * A handle that adds to another one (metering, a minimum hold): whatever a subclass does not override goes to the
 * handle it wraps; {@link #onLost} returns this handle, and {@link #close()} is {@link #release()}.
 */
public abstract class ForwardingHandle implements ControlledHandle {

    protected final ControlledHandle handle;

    protected ForwardingHandle(ControlledHandle handle) {
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
    public boolean confirmedWithin(long nanos) {
        return handle.confirmedWithin(nanos);
    }

    @Override
    public boolean confirm(long sinceNanos) {
        return handle.confirm(sinceNanos);
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
    public LockLostException releaseReportingLoss() {
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
