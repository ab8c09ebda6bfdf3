package io.quarkiverse.mysqllock.runtime.coordination;

/**
 * The number of permits of each semaphore (a read-write lock's readers are one), one for the whole fleet: kept in the
 * lock table, in memory for the in-memory engine. Read at every acquisition, so that a deliberate change reaches every
 * instance's next one.
 */
public interface PermitCounts {

    /**
     * The fleet's number of permits of this semaphore: the stored one, or {@code proposed}, stored now if none was
     * (another instance storing its own at the same moment may win: the answer is what was stored).
     */
    int permits(String semaphore, int proposed);

    /**
     * Stores {@code permits} as the fleet's number; with {@code onlyUpward}, a lower number than the stored one is not
     * stored. Answers the number stored afterwards.
     */
    int change(String semaphore, int permits, boolean onlyUpward);
}
