package io.quarkiverse.mysqllock.runtime.engine;

import java.util.concurrent.atomic.AtomicReference;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;

/** What the manager and the {@code @Locked} interceptor need of a handle beyond the public API. */
public interface ControlledHandle extends LockHandle {

    /**
     * Releases this hold and says whether the lock was lost while it was held: the loss found by the release itself
     * included (a session killed, a lease taken over since the last check). Null if it was held throughout, as far as
     * this instance can tell.
     */
    LockLostException releaseReportingLoss();

    /**
     * Whether the hold is valid and its lock was confirmed on the server less than {@code nanos} ago (NAMED: by a
     * keepalive check of its session; LEASE: as {@link #isValid()}, a lease's validity being bounded already).
     */
    default boolean confirmedWithin(long nanos) {
        return isValid();
    }

    /**
     * Whether the hold is valid, its lock found held on the server at some moment after {@code sinceNanos}
     * ({@link System#nanoTime()}): NAMED asks the server now unless a check of the lock's session came after that moment;
     * engines whose validity is bounded in time (leases) answer {@link #isValid()}. For a hold taken before a wait, to
     * know that it outlived the wait.
     */
    default boolean confirm(long sinceNanos) {
        return isValid();
    }

    /** How the lock was lost, or null if it was not (as far as this instance knows without a statement). */
    LockLostException loss();

    /**
     * This hold no longer belongs to the calling thread's own call (its release comes later, or another thread took
     * it over): the thread cannot nest onto it anymore.
     */
    void detach();

    /**
     * Ends this hold as {@link #release()} does, telling its holders first that the lock is lost (reason
     * {@code CANCELLED}, with the message {@code why} completes): an asynchronous hold whose subscription was cancelled
     * after the handle was delivered, which may have been dropped on its way.
     */
    void abandon(String why);

    /** A loss to throw to the caller of an action that ran under the lock: the cause's reason, this call's stack. */
    static LockLostException lostDuring(String what, LockLostException cause) {
        return new LockLostException(cause.lockName(), cause.reason(), "Lock '" + cause.lockName() + "' was lost while "
                + what + " ran under it, so it may not have run exclusively: " + cause.getMessage(), cause);
    }

    /**
     * A loss to throw to the caller of an action that never began: the lock of {@code handle}, granted, was found lost
     * before it (its cause, told at once by {@code onLost}, if the handle still has it).
     */
    static LockLostException lostBefore(String what, String name, LockHandle handle) {
        AtomicReference<LockLostException> loss = new AtomicReference<>();
        handle.onLost(loss::set); // told at once: it is lost
        LockLostException cause = loss.get();
        return new LockLostException(name, cause == null ? LockLostException.Reason.NOT_HELD : cause.reason(), what
                + " did not run: its lock '" + name + "' was lost after it was granted, before the method began"
                + (cause == null ? "" : ": " + cause.getMessage()), cause);
    }

    /** The action's own failure, carrying the loss of its lock while it ran ({@link #lostDuring}) if there was one. */
    static <T extends Throwable> T withLoss(T failure, String what, LockLostException lost) {
        if (lost != null) {
            failure.addSuppressed(lostDuring(what, lost));
        }
        return failure;
    }
}
