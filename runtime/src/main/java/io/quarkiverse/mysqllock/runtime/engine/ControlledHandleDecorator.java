package io.quarkiverse.mysqllock.runtime.engine;

import io.quarkiverse.mysqllock.LockLostException;

/**
 * A handle that adds to another of this extension's (metering, a minimum hold), the engines' controls included: whatever
 * a subclass does not override goes to the handle it wraps.
 */
public abstract class ControlledHandleDecorator extends HandleDecorator<ControlledHandle> implements ControlledHandle {

    protected ControlledHandleDecorator(ControlledHandle handle) {
        super(handle);
    }

    /** The engine's own hold beneath every decorator of {@code handle} (for tests that reach the lock's monitor). */
    public static ControlledHandle innermost(ControlledHandle handle) {
        ControlledHandle inner = handle;
        while (inner instanceof ControlledHandleDecorator decorator) {
            inner = decorator.handle;
        }
        return inner;
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
}
