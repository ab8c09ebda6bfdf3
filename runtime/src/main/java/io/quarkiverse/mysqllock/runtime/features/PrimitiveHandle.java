package io.quarkiverse.mysqllock.runtime.features;

import java.util.List;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.HandleDecorator;

/**
 * A handle of a coordination primitive (a permit, several permits, a read or write lock) as {@link AsyncAcquisition}
 * delivers it: what it needs of a {@link ControlledHandle} (a release, an abandonment after a cancellation) on top of
 * the handle, to which everything else goes.
 */
public final class PrimitiveHandle extends HandleDecorator<LockHandle> implements ControlledHandle {

    private PrimitiveHandle(LockHandle handle) {
        super(handle);
    }

    public static ControlledHandle of(LockHandle handle) {
        return handle == null || handle instanceof ControlledHandle ? (ControlledHandle) handle : new PrimitiveHandle(handle);
    }

    @Override
    public List<LockHandle> parts() {
        return handle.parts();
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
}
