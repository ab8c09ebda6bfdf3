package io.quarkiverse.mysqllock.runtime.jobs;

import java.time.Instant;
import java.util.function.BiConsumer;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.runtime.table.TickRows;

/**
 * The catch-ups of a manager's jobs: the mark a claim finds missed ticks by, the missed ticks a catch-up takes with the
 * job's lock held, and the launch of the next catch-up once a run ends.
 */
final class CatchUps {

    private static final Logger LOG = Logger.getLogger(CatchUps.class);
    /** How many times a take is tried while claims of the job change its missed ticks. */
    private static final int TAKE_ATTEMPTS = 10;

    /** The tick a catch-up takes, and whether missed ticks are left after it ({@code RUN_ALL}). */
    record Taken(long tick, boolean more) {
    }

    /** Runs a job's catch-up: its {@code @Locked} method, by its name; none where the application has no job. */
    private volatile BiConsumer<String, JobTick> launcher = (name, tick) -> {
    };

    void launchWith(BiConsumer<String, JobTick> launcher) {
        this.launcher = launcher;
    }

    /**
     * The mark the claim of {@code tick} finds missed ticks by ({@link io.quarkiverse.mysqllock.runtime.table.JobClaim#isGap}):
     * the job's latest scheduled tick more than {@link TickRows#WINDOW} before it, which no instance can claim late any
     * more; 0 for a job that does not catch up.
     */
    static long missedBefore(JobTick tick) {
        CatchUp catchUp = tick.catchUp();
        if (catchUp == null) {
            return 0;
        }
        long[] before = catchUp.schedule().latest(0, tick.tick() - TickRows.WINDOW.toMillis() - 1, 1);
        return before.length == 0 ? 0 : before[0];
    }

    /**
     * With the job's lock held, takes the next of its missed ticks to catch up, as its policy says: null when it has
     * none (or is not active). The take is a conditional write: of two catch-ups, one takes each tick.
     */
    static Taken take(JobStore store, String name, String serverName, CatchUp catchUp) {
        for (int attempt = 0; attempt < TAKE_ATTEMPTS; attempt++) {
            long[] range = store.catchUpRange(name, serverName);
            if (range == null) {
                return null;
            }
            // the oldest of the ticks the policy catches up, in both ranges; what is left: the ticks after it, in its
            // range and the next one (the unchosen ticks before it are dropped); none once it is the last chosen
            long[] ticks = catchUp.ticks(range);
            long first = ticks.length == 0 ? 0 : ticks[0];
            long[] left = ticks.length <= 1 ? new long[4]
                    : first <= range[1] ? new long[] { first, range[1], range[2], range[3] }
                            : new long[] { first, range[3], 0, 0 };
            if (store.takeCatchUp(name, serverName, range, left)) {
                if (ticks.length == 0) {
                    LOG.debugf("Job '%s' has no missed tick within %s of %s to catch up", name, catchUp.window(),
                            Instant.ofEpochMilli(Math.max(range[1], range[3])));
                    return null;
                }
                return new Taken(first, ticks.length > 1);
            }
        }
        LOG.warnf("The missed ticks of job '%s' changed %d times while they were taken: the next run's instance catches"
                + " them up", name, TAKE_ATTEMPTS);
        return null;
    }

    /** Once the run of {@code tick} ended, launches the job's next catch-up (on a worker thread). */
    void after(JobTick tick, String name) {
        CatchUp catchUp = tick.catchUp();
        tick.afterEnd(() -> {
            JobTick next = JobTick.catchUp(catchUp);
            tick.followedBy(next);
            launch(name, next);
        });
    }

    /** Launches a run of a job outside its schedule (a catch-up, a queued run), on a worker thread. */
    void launch(String name, JobTick run) {
        try {
            launcher.accept(name, run);
        } catch (RuntimeException e) {
            LOG.warnf("A %s run of job '%s' could not be launched (the next run's instance does): %s", run.kind(), name,
                    e.toString());
            run.outcome().complete(null);
        }
    }
}
