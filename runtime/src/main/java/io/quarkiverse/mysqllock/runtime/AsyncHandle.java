package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;

/**
 * A handle of a coordination primitive (a permit, several permits, a read or write lock) as {@link AsyncAcquisition}
 * delivers it: what it needs of a {@link ControlledHandle} (a release, an abandonment after a cancellation) on top of
 * the handle, to which everything else goes.
 */
final class AsyncHandle implements ControlledHandle {

    private final LockHandle handle;

    private AsyncHandle(LockHandle handle) {
        this.handle = handle;
    }

    static ControlledHandle of(LockHandle handle) {
        return handle == null || handle instanceof ControlledHandle ? (ControlledHandle) handle : new AsyncHandle(handle);
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
    public List<LockHandle> parts() {
        return handle.parts();
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
    public LockLostException releaseReportingLoss() {
        return HandleReleases.releaseReportingLoss(handle);
    }

    @Override
    public LockLostException loss() {
        return null; // a composite tells its loss through onLost and its release
    }

    @Override
    public void detach() {
        // no thread nests onto a primitive's hold
    }

    /** A cancelled subscription's handle: given back; its holders learn it through {@code isValid()}. */
    @Override
    public void abandon(String why) {
        handle.release();
    }

    @Override
    public String toString() {
        return handle.toString();
    }
}
