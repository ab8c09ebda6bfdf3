package io.quarkiverse.mysqllock.runtime.engine;

/** What a {@link LockHold} asks of the engine that granted its lock. */
public interface HoldEngine<L extends HeldLock> {

    /** Ends one hold; the lock is released when its last hold ends. */
    void release(L lock);

    /**
     * Ends the lock's only hold, telling its holders first that it is lost (reason {@code CANCELLED}): for an
     * asynchronous hold whose handle may have been dropped on its way to the application.
     */
    void abandon(L lock, String message);

    /** The lock's fencing token. */
    long fencingToken(L lock);

    /** Whether the lock is still held for us, as far as this instance can tell without a statement. */
    default boolean isValid(L lock) {
        return lock.lost == null;
    }
}
