package io.quarkiverse.mysqllock.runtime.locked;

import io.quarkiverse.mysqllock.runtime.jobs.JobTick;
import io.quarkus.scheduler.ScheduledExecution;

/**
 * Reads the tick of a scheduled run. A class of its own so that the scheduler API (an optional dependency) is only
 * loaded by applications with a {@code @Locked} scheduled method.
 */
final class ScheduledTicks {

    private ScheduledTicks() {
    }

    /** The tick of a run outside the schedule ({@link JobExecution}); null for a tick its trigger fired. */
    static JobTick given(Object execution) {
        return execution instanceof JobExecution job ? job.tick() : null;
    }

    static long tick(Object execution) {
        return ((ScheduledExecution) execution).getScheduledFireTime().toEpochMilli();
    }
}
