package io.quarkiverse.mysqllock.runtime.coordination;

/**
 * The number of permits of each semaphore and the number of readers of each read-write lock, one for the whole fleet:
 * kept in the lock table, in memory for the in-memory engine. Read at every acquisition, so that a deliberate change
 * reaches every instance's next one.
 */
public interface PermitCounts {

    /** What a number counts: each kind is kept apart, so that no semaphore's name reaches a read-write lock's number. */
    enum Kind {
        /** A semaphore's permits: changed either way. */
        PERMITS,
        /** A read-write lock's readers: only ever raised, so that no writer takes fewer permits than a reader holds. */
        READERS
    }

    /**
     * The fleet's number for the semaphore or read-write lock {@code name}: the stored one, or {@code proposed}, stored
     * now if none was (another instance storing its own at the same moment may win: the answer is what was stored).
     *
     * @throws Unreadable if it cannot be read or stored, or what is stored is no number of permits
     */
    int permits(String name, Kind kind, int proposed);

    /**
     * Stores {@code permits} as the fleet's number (for {@link Kind#READERS}, only if not lower): the number afterwards.
     *
     * @throws Unreadable if it cannot be stored or read back
     */
    int change(String name, Kind kind, int permits);

    /** The number could not be read or stored: the database failed, or its row holds no number of permits. */
    final class Unreadable extends IllegalStateException {
        public Unreadable(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
