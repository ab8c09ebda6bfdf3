package io.quarkiverse.mysqllock;

import java.util.NoSuchElementException;

/**
 * What {@link LockManager#tryWithLock} did: ran the action under the lock, with its result, or did not run it because
 * someone else held the lock (ShedLock's {@code TaskResult}). The result of an action that ran may be {@code null}.
 *
 * @param <T> the action's result
 */
public final class LockedRun<T> {

    private final String lockName;
    private final boolean ran;
    private final T result;

    private LockedRun(String lockName, boolean ran, T result) {
        this.lockName = lockName;
        this.ran = ran;
        this.result = result;
    }

    /** The action ran under the lock and returned {@code result}. */
    public static <T> LockedRun<T> ran(String lockName, T result) {
        return new LockedRun<>(lockName, true, result);
    }

    /** The action did not run: the lock was held elsewhere. */
    public static <T> LockedRun<T> notRun(String lockName) {
        return new LockedRun<>(lockName, false, null);
    }

    /** The lock name as requested. */
    public String lockName() {
        return lockName;
    }

    /** Whether the action ran (the lock was free, or freed within the wait). */
    public boolean ran() {
        return ran;
    }

    /**
     * The action's result.
     *
     * @throws NoSuchElementException if the action did not run
     */
    public T result() {
        if (!ran) {
            throw new NoSuchElementException("The action did not run: lock '" + lockName + "' was held elsewhere");
        }
        return result;
    }

    /** The action's result if it ran, {@code other} if it did not. */
    public T orElse(T other) {
        return ran ? result : other;
    }

    @Override
    public String toString() {
        return ran ? "ran under '" + lockName + "': " + result : "not run: '" + lockName + "' was held elsewhere";
    }
}
