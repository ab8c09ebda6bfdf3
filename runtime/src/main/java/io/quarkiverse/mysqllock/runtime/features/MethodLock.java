package io.quarkiverse.mysqllock.runtime.features;

import java.util.List;
import java.util.Optional;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.runtime.engine.HandleDecorator;

/**
 * The lock of a {@code @Locked} method as the method sees it: through its {@code LockHandle} parameter, or
 * {@link LockManager#currentLock()} while its blocking body runs on this thread. Everything but the release: the
 * interceptor releases it when the method ends (after its {@code atLeastFor}, reporting a loss), so the method's own
 * {@code release()} or {@code close()} is refused rather than cutting that short.
 */
public final class MethodLock extends HandleDecorator<LockHandle> {

    /** The innermost {@code @Locked} method's lock on this thread, and the manager that took it. */
    private static final ThreadLocal<MethodLock> CURRENT = new ThreadLocal<>();

    private final LockManager manager;
    private final String method;

    /** @param handle the lock the interceptor took for the method: an exclusive lock, a permit, a read or write lock */
    public MethodLock(LockHandle handle, LockManager manager, String method) {
        super(handle);
        this.manager = manager;
        this.method = method;
    }

    /** Makes this the current lock of the thread; returns the one it replaces, to be restored with {@link #restore}. */
    public MethodLock enter() {
        MethodLock previous = CURRENT.get();
        CURRENT.set(this);
        return previous;
    }

    public static void restore(MethodLock previous) {
        if (previous == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(previous);
        }
    }

    /** The innermost {@code @Locked} method's lock on this thread, if {@code manager} took it. */
    public static Optional<LockHandle> current(LockManager manager) {
        MethodLock current = CURRENT.get();
        return current != null && current.manager == manager ? Optional.of(current) : Optional.empty();
    }

    @Override
    public List<LockHandle> parts() {
        return handle.parts();
    }

    @Override
    public void release() {
        throw new IllegalStateException("Lock '" + name() + "' of " + method + " is released by the interceptor when"
                + " the method ends: do not release it from the method (call LockManager.acquire for a lock of your"
                + " own to release)");
    }
}
