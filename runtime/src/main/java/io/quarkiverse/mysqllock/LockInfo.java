package io.quarkiverse.mysqllock;

import java.time.Instant;

/**
 * What is known of a lock's current holder.
 *
 * @param name the lock name as requested
 * @param holder the holder's identity: {@code <host>/<pid>/<instance-id>} and its server connection
 * @param since when the holder acquired it, or null when not known (a holder in another process, NAMED engine)
 * @param fencingToken the holder's fencing token, or 0 when none was issued or it is not known
 * @param mode the engine holding it
 */
public record LockInfo(String name, String holder, Instant since, long fencingToken, LockMode mode) {
}
