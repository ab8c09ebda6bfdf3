package io.quarkiverse.mysqllock.runtime.fence;

import io.quarkiverse.mysqllock.FenceRefusedException;
import io.quarkiverse.mysqllock.FenceRefusedException.Reason;
import io.quarkiverse.mysqllock.LockFence;

/** The refusals of a fence, with the messages that say what happened. */
public final class FenceChecks {

    private FenceChecks() {
    }

    /** Refuses {@code fence} if the newest token admitted for its lock, {@code newest}, is greater. */
    public static void refuseIfStale(LockFence fence, long newest) {
        if (newest > fence.token()) {
            throw new FenceRefusedException(fence.lock(), Reason.STALE, fence.token(), newest, "Lock '" + fence.lock()
                    + "': token " + fence.token() + " is older than token " + newest + ", admitted before. Its sender lost"
                    + " the lock, and a later holder's request came first: the write is refused", null);
        }
    }

    public static FenceRefusedException missing(String lock) {
        return new FenceRefusedException(lock, Reason.MISSING, 0, 0, "Lock '" + lock + "': the request carries no "
                + LockFence.HEADER + " header, and this resource is fenced by that lock. Send the token of the lock the"
                + " caller holds (the REST Client filter LockFenceClientFilter does, from a @Locked method)", null);
    }

    public static FenceRefusedException otherLock(String lock, LockFence fence) {
        return new FenceRefusedException(lock, Reason.INVALID, fence.token(), 0, "Lock '" + lock + "': the request"
                + " carries the token of lock '" + fence.lock() + "', and this resource is fenced by '" + lock + "':"
                + " tokens compare only within one lock. Take the lock the resource is fenced by", null);
    }

    public static FenceRefusedException malformed(String lock, String problem) {
        return new FenceRefusedException(lock, Reason.INVALID, 0, 0, "Lock '" + lock + "': " + problem, null);
    }

    static FenceRefusedException unavailable(LockFence fence, String problem, Throwable cause) {
        return new FenceRefusedException(fence.lock(), Reason.UNAVAILABLE, fence.token(), 0, "Lock '" + fence.lock()
                + "': its fence could not be checked now (" + problem + "); nothing was written. Try again", cause);
    }
}
