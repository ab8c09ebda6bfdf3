package io.quarkiverse.mysqllock.runtime.jobs;

import java.time.Duration;

import io.quarkiverse.mysqllock.jobs.MissedTicks;

/**
 * A job's missed-ticks policy ({@code quarkus.mysql-lock.jobs."<job>".missed-ticks}, other than {@code SKIP}), with its
 * schedule: which of the ticks no instance ran a catch-up runs for.
 *
 * @param policy {@link MissedTicks#RUN_ONCE} or {@link MissedTicks#RUN_ALL}
 * @param window how far back from the last missed tick to look
 * @param maxRuns {@link MissedTicks#RUN_ALL}: at most this many runs
 * @param schedule the job's ticks
 */
public record CatchUp(MissedTicks policy, Duration window, int maxRuns, JobSchedule schedule) {

    public CatchUp {
        if (policy == MissedTicks.SKIP) {
            throw new IllegalArgumentException("A job that skips its missed ticks has no catch-up");
        }
    }

    /**
     * The ticks left to catch up in a pending range of missed ticks, oldest first: the latest one for
     * {@link MissedTicks#RUN_ONCE}, the latest {@link #maxRuns} for {@link MissedTicks#RUN_ALL}, all within the window.
     *
     * @param after the last tick before the range (not missed)
     * @param upTo where the range ends: the last missed tick is the schedule's latest up to it
     */
    long[] ticks(long after, long upTo) {
        long[] last = schedule.latest(after, upTo, 1);
        if (last.length == 0) {
            return last;
        }
        long from = Math.max(after, last[0] - window.toMillis());
        return schedule.latest(from, last[0], runs());
    }

    /**
     * The ticks left to catch up in a job's two ranges of missed ticks ({@code {after, upTo, nextAfter, nextUpTo}}, the
     * next range 0, 0 for none), oldest first, chosen as {@link #ticks(long, long)} chooses them in one range: the
     * latest missed tick is the next range's last, the window is counted back from it, and the policy's count is for
     * both ranges together (one run for {@link MissedTicks#RUN_ONCE}).
     */
    long[] ticks(long[] range) {
        long[] next = range[3] == 0 ? new long[0] : ticks(range[2], range[3]);
        if (next.length == 0) {
            return range[1] == 0 ? new long[0] : ticks(range[0], range[1]);
        }
        int left = runs() - next.length;
        if (left <= 0 || range[1] == 0) {
            return next;
        }
        long[] older = schedule.latest(Math.max(range[0], next[next.length - 1] - window.toMillis()), range[1], left);
        long[] both = java.util.Arrays.copyOf(older, older.length + next.length);
        System.arraycopy(next, 0, both, older.length, next.length);
        return both;
    }

    private int runs() {
        return policy == MissedTicks.RUN_ONCE ? 1 : maxRuns;
    }
}
