package io.quarkiverse.mysqllock;

/**
 * Fired (as a CDI event) when a {@link Locked} method with {@code onBusy = SKIP} did not run because its lock was held
 * elsewhere: observe it to count or report cluster-wide skips, for example of a {@code @Scheduled} job.
 *
 * @param lockName the lock name
 * @param method the method, as {@code <class>#<method>}
 */
public record LockSkipped(String lockName, String method) {
}
