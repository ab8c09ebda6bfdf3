package io.quarkiverse.mysqllock.runtime.locked;

import io.quarkus.scheduler.ScheduledExecution;

/**
 * Reads the tick of a scheduled run. A class of its own so that the scheduler API (an optional dependency) is only
 * loaded by applications with a {@code @Locked} scheduled method.
 */
final class ScheduledTicks {

    private ScheduledTicks() {
    }

    static long tick(Object execution) {
        return ((ScheduledExecution) execution).getScheduledFireTime().toEpochMilli();
    }
}
