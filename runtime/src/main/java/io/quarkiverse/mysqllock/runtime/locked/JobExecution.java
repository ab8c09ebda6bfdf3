package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Instant;

import io.quarkiverse.mysqllock.runtime.jobs.JobTick;
import io.quarkus.scheduler.ScheduledExecution;
import io.quarkus.scheduler.Trigger;

/**
 * The {@code ScheduledExecution} a job's method is given when it runs outside its schedule ({@link JobLaunches}): its
 * scheduled fire time is the tick of the run (for a run-now, when it was asked for), and its trigger says what it is.
 */
final class JobExecution implements ScheduledExecution {

    private final JobTick tick;
    private final Instant fired = Instant.now();
    private final Trigger trigger;

    JobExecution(JobTick tick, String job, String description) {
        this.tick = tick;
        this.trigger = new Trigger() {
            @Override
            public String getId() {
                return tick.kind().name().toLowerCase(java.util.Locale.ROOT) + ":" + job;
            }

            @Override
            public Instant getNextFireTime() {
                return null;
            }

            @Override
            public Instant getPreviousFireTime() {
                return fired;
            }

            @Override
            public boolean isOverdue() {
                return false;
            }

            @Override
            public String getMethodDescription() {
                return description;
            }
        };
    }

    JobTick tick() {
        return tick;
    }

    @Override
    public Trigger getTrigger() {
        return trigger;
    }

    @Override
    public Instant getFireTime() {
        return fired;
    }

    @Override
    public Instant getScheduledFireTime() {
        return Instant.ofEpochMilli(tick.tick());
    }
}
