package io.quarkiverse.mysqllock.runtime;

import java.util.List;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;

/** Releases of handles this extension granted, telling whether the lock was lost while held. */
public final class HandleReleases {

    private HandleReleases() {
    }

    /**
     * Releases the handle and answers the loss of its lock found before or by the release, if any: for a handle of
     * several locks (a writer's hold, {@code acquireAll}), the first of its parts' losses, its parts released last
     * taken first.
     */
    public static LockLostException releaseReportingLoss(LockHandle handle) {
        if (handle instanceof ControlledHandle controlled) {
            return controlled.releaseReportingLoss();
        }
        List<LockHandle> parts = handle.parts();
        LockLostException first = null;
        if (parts.size() > 1 || parts.get(0) != handle) {
            for (int i = parts.size() - 1; i >= 0; i--) {
                LockLostException lost = releaseReportingLoss(parts.get(i));
                first = first == null ? lost : first;
            }
        }
        handle.release();
        return first;
    }
}
