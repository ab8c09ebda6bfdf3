package io.quarkiverse.mysqllock.runtime.coordination;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;

/**
 * A handle made of several holds taken as one: valid while each is, lost with the first that is lost (its listeners are
 * told once), extended together, released together in the reverse of the order they were taken.
 */
public abstract class CompositeHandle implements LockHandle {

    private final List<? extends LockHandle> holds;
    private final AtomicBoolean released = new AtomicBoolean();

    protected CompositeHandle(List<? extends LockHandle> holds) {
        this.holds = List.copyOf(holds);
    }

    /** The holds, in the order they were taken. */
    protected List<? extends LockHandle> holds() {
        return holds;
    }

    @Override
    public boolean isValid() {
        return !released.get() && holds.stream().allMatch(LockHandle::isValid);
    }

    /** The listener is told once, of the first of its locks lost. */
    @Override
    public LockHandle onLost(Consumer<LockLostException> listener) {
        if (listener == null) {
            throw new IllegalArgumentException("onLost listener must not be null");
        }
        AtomicBoolean told = new AtomicBoolean();
        Consumer<LockLostException> once = lost -> {
            if (told.compareAndSet(false, true)) {
                listener.accept(lost);
            }
        };
        for (LockHandle hold : holds) {
            hold.onLost(once);
        }
        return this;
    }

    /** Extends each hold; true only if each was extended. */
    @Override
    public boolean extend(Duration atMostFor) {
        if (released.get()) {
            throw new IllegalStateException("Lock '" + name() + "' was released: it cannot be extended");
        }
        boolean all = true;
        for (LockHandle hold : holds) {
            all &= hold.extend(atMostFor);
        }
        return all;
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            releaseInReverse(holds, hold -> {
                hold.release();
                return null;
            });
        }
    }

    /**
     * Releases every hold as {@link #release()} does, each with {@code release}, which answers the loss of its lock
     * found before or by the release: the first of them, or null.
     */
    public LockLostException releaseReportingLoss(Function<LockHandle, LockLostException> release) {
        return released.compareAndSet(false, true) ? releaseInReverse(holds, release) : null;
    }

    @Override
    public void close() {
        release();
    }

    /** Releases each hold, last taken first, even if some release fails (the first failure is thrown at the end). */
    public static void releaseInReverse(List<? extends LockHandle> holds) {
        releaseInReverse(holds, hold -> {
            hold.release();
            return null;
        });
    }

    /**
     * Releases each hold with {@code release}, last taken first, even if some release fails (the first failure is
     * thrown at the end); the first loss they answer, or null.
     */
    public static LockLostException releaseInReverse(List<? extends LockHandle> holds,
            Function<LockHandle, LockLostException> release) {
        RuntimeException failure = null;
        LockLostException first = null;
        for (int i = holds.size() - 1; i >= 0; i--) {
            try {
                LockLostException lost = release.apply(holds.get(i));
                first = first == null ? lost : first;
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        return first;
    }
}
