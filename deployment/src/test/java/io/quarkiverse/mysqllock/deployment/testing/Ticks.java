package io.quarkiverse.mysqllock.deployment.testing;

import java.time.Instant;

import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.scheduler.Trigger;

/** Scheduled executions for tests of tick claims: a tick is the scheduled fire time, here any epoch millisecond. */
public final class Ticks {

    private Ticks() {
    }

    /** An execution of the tick {@code epochMillis}, fired now. */
    public static ScheduledExecution at(long epochMillis) {
        Instant tick = Instant.ofEpochMilli(epochMillis);
        return new ScheduledExecution() {
            @Override
            public Trigger getTrigger() {
                return null;
            }

            @Override
            public Instant getFireTime() {
                return Instant.now();
            }

            @Override
            public Instant getScheduledFireTime() {
                return tick;
            }
        };
    }
}
