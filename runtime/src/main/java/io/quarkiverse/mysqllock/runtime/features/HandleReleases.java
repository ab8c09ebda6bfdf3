package io.quarkiverse.mysqllock.runtime.features;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.coordination.CompositeHandle;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.transaction.TransactionBoundEngine;

/**
 * Releases of handles this extension granted, telling whether the lock was lost while held; and the confirmations
 * asked of such a handle: {@link #confirmedWithin} for the elections' strict terms ({@code TermConfirmation}),
 * {@link #confirm} for the read-write lock's gate ({@code GatedReadWriteLock}). A handle of another kind answers its
 * {@code isValid()}.
 */
public final class HandleReleases {

    private HandleReleases() {
    }

    /** Whether a handle this extension granted is valid and was confirmed on the server less than {@code nanos} ago. */
    public static boolean confirmedWithin(LockHandle handle, long nanos) {
        return handle instanceof ControlledHandle controlled ? controlled.confirmedWithin(nanos) : handle.isValid();
    }

    /**
     * Whether a handle this extension granted is valid and its lock was found held on the server after
     * {@code sinceNanos}, asking the server now if need be ({@link ControlledHandle#confirm}).
     */
    public static boolean confirm(LockHandle handle, long sinceNanos) {
        return handle instanceof ControlledHandle controlled ? controlled.confirm(sinceNanos) : handle.isValid();
    }

    /**
     * Releases the handle at once, inside a transaction too: for a hold a primitive takes for itself while it acquires
     * (a read-write lock's gate), which the transaction's commit has nothing to do with.
     */
    public static void releaseAtOnce(LockHandle handle) {
        if (handle instanceof CompositeHandle composite) {
            composite.releaseReportingLoss(part -> {
                releaseAtOnce(part);
                return null;
            });
        } else {
            TransactionBoundEngine.releaseAtOnce(handle);
        }
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
        if (handle instanceof CompositeHandle composite) {
            return composite.releaseReportingLoss(HandleReleases::releaseReportingLoss);
        }
        handle.release();
        return null;
    }
}
