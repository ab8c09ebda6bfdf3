/**
 * Scheduled jobs on a fleet: the run history, the state, and the fleet-wide control of the {@code @Scheduled}
 * {@code @Locked} methods with a {@code ScheduledExecution} parameter.
 */
package io.quarkiverse.mysqllock.jobs;
