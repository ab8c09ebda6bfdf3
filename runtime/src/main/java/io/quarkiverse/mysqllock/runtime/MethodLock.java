package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;

/**
 * The lock of a {@code @Locked} method as the method sees it: through its {@code LockHandle} parameter, or
 * {@link LockManager#currentLock()} while its blocking body runs on this thread. Everything but the release: the
 * interceptor releases it when the method ends (after its {@code atLeastFor}, reporting a loss), so the method's own
 * {@code release()} or {@code close()} is refused rather than cutting that short.
 */
public final class MethodLock implements LockHandle {

    /** The innermost {@code @Locked} method's lock on this thread, and the manager that took it. */
    private static final ThreadLocal<MethodLock> CURRENT = new ThreadLocal<>();

    private final LockHandle handle;
    private final LockManager manager;
    private final String method;

    /** @param handle the lock the interceptor took for the method: an exclusive lock, a permit, a read or write lock */
    public MethodLock(LockHandle handle, LockManager manager, String method) {
        this.handle = handle;
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
    static Optional<LockHandle> current(LockManager manager) {
        MethodLock current = CURRENT.get();
        return current != null && current.manager == manager ? Optional.of(current) : Optional.empty();
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
        throw new IllegalStateException("Lock '" + name() + "' of " + method + " is released by the interceptor when"
                + " the method ends: do not release it from the method (call LockManager.acquire for a lock of your"
                + " own to release)");
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return handle.toString();
    }
}
