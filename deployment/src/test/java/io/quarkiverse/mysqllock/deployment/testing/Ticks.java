package io.quarkiverse.mysqllock.deployment.testing;

import java.time.Instant;

import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.scheduler.Trigger;

/** Scheduled executions for tests of tick claims: a tick is the scheduled fire time, here any epoch millisecond. */
public final class Ticks {

    private Ticks() {
    }

    /** An execution of the tick {@code epochMillis}, fired now, without a trigger. */
    public static ScheduledExecution at(long epochMillis) {
        return at(epochMillis, null);
    }

    /**
     * An execution of the tick {@code epochMillis}, fired now, by a trigger whose next fire time is {@code next} (no
     * trigger where it is null).
     */
    public static ScheduledExecution at(long epochMillis, Instant next) {
        Instant tick = Instant.ofEpochMilli(epochMillis);
        Trigger trigger = next == null ? null : new Trigger() {
            @Override
            public String getId() {
                return "ticks";
            }

            @Override
            public Instant getNextFireTime() {
                return next;
            }

            @Override
            public Instant getPreviousFireTime() {
                return tick;
            }

            @Override
            public boolean isOverdue() {
                return false;
            }
        };
        return new ScheduledExecution() {
            @Override
            public Trigger getTrigger() {
                return trigger;
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
