package io.quarkiverse.mysqllock;

/**
 * Fired (as a CDI event) when a {@link Locked} method did not run because its lock was held elsewhere (with
 * {@code onBusy = SKIP}), or because the scheduled tick it was called for already ran on some instance (a method with a
 * {@code ScheduledExecution} parameter): observe it to count or report cluster-wide skips of a {@code @Scheduled} job.
 *
 * @param lockName the lock name
 * @param method the method, as {@code <class>#<method>}
 */
public record LockSkipped(String lockName, String method) {
}
