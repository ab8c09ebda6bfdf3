package io.quarkiverse.mysqllock.runtime.engine;

/** What a {@link HoldHandle} asks of the engine that granted its lock. */
public interface GrantingEngine<L extends GrantedLock> {

    /** Ends one hold; the lock is released when its last hold ends. */
    void release(L lock);

    /**
     * Ends the lock's only hold, telling its holders first that it is lost (reason {@code CANCELLED}): for an
     * asynchronous hold whose handle may have been dropped on its way to the application.
     */
    void abandon(L lock, String message);

    /**
     * Moves the lock's end to {@code atMostForNanos} from now, if it has one ({@code atMostFor}: a capped lease's end,
     * or the cap {@link HoldCaps} keeps for a NAMED or in-memory lock); a lock without one (an uncapped named lock, a
     * renewed lease) lasts until it is released and needs nothing.
     *
     * @return false if the database did not answer: the lock then counts as ending at the earlier of its former end and
     *         the new one
     * @throws io.quarkiverse.mysqllock.LockLostException if the lock is found lost, or (NAMED, in-memory) the end at its
     *         cap has begun: decided in one step with that end ({@link HoldCaps#extend}), so that true means the lock
     *         is held until its new end
     */
    default boolean extend(L lock, long atMostForNanos) {
        return true;
    }

    /**
     * Whether the lock is valid and was last confirmed on the server less than {@code nanos} ago: a NAMED lock's
     * session by a keepalive check. Engines whose validity is already bounded in time (leases) answer
     * {@link #isValid}.
     */
    default boolean confirmedWithin(L lock, long nanos) {
        return isValid(lock);
    }

    /**
     * Whether the lock is valid and was found held on the server after {@code sinceNanos}, asking the server now if
     * need be (NAMED); engines whose validity is bounded in time answer {@link #isValid}.
     */
    default boolean confirm(L lock, long sinceNanos) {
        return isValid(lock);
    }

    /** The lock's fencing token. */
    long fencingToken(L lock);

    /** Whether the lock is still held for us, as far as this instance can tell without a statement. */
    default boolean isValid(L lock) {
        return lock.lost == null;
    }
}
