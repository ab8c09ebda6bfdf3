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

    /** The trigger's next fire time, as the scheduler sees it now; null without a trigger. */
    static java.time.Instant nextFire(Object execution) {
        io.quarkus.scheduler.Trigger trigger = ((ScheduledExecution) execution).getTrigger();
        return trigger == null ? null : trigger.getNextFireTime();
    }

    static long tick(Object execution) {
        return ((ScheduledExecution) execution).getScheduledFireTime().toEpochMilli();
    }
}
