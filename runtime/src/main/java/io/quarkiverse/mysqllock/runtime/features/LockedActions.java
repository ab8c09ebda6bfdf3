package io.quarkiverse.mysqllock.runtime.features;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.UniUnderLock;

/**
 * An action run under a lock ({@code withLock}, {@code tryWithLock}, {@code withLockAsync}): the lock is released
 * whatever the action does, and a loss of the lock while it ran reaches the caller.
 */
public final class LockedActions {

    private LockedActions() {
    }

    /**
     * Runs the action while holding the lock, then releases it whatever happens: the action's exceptions propagate
     * (checked ones wrapped in a {@link CompletionException}), a loss found meanwhile or by the release is thrown after
     * it returns, or added to its exception.
     */
    public static <T> T holding(ControlledHandle handle, Callable<T> action, String what) {
        T result;
        try {
            result = action.call();
        } catch (Throwable failure) {
            ControlledHandle.withLoss(failure, what, handle.releaseReportingLoss());
            if (failure instanceof RuntimeException || failure instanceof Error) {
                throw sneaky(failure);
            }
            throw new CompletionException(failure);
        }
        // The release itself may find the loss (a session killed since the last keepalive, a lease taken over).
        LockLostException lost = handle.releaseReportingLoss();
        if (lost != null) {
            throw ControlledHandle.lostDuring(what, lost);
        }
        return result;
    }

    /** The outcomes of an asynchronous action under a lock: released at its end, a loss failing it or added to it. */
    public static UniUnderLock.Outcomes asynchronous(String what) {
        return new UniUnderLock.Outcomes() {
            @Override
            public LockLostException release(ControlledHandle handle, long startNanos) {
                return handle.releaseReportingLoss();
            }

            @Override
            public Throwable withLoss(Throwable failure, LockLostException lost) {
                return ControlledHandle.withLoss(failure, what, lost);
            }

            @Override
            public Throwable lost(LockLostException lost) {
                return ControlledHandle.lostDuring(what, lost);
            }
        };
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneaky(Throwable failure) throws E {
        throw (E) failure;
    }
}
