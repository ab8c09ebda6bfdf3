package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.Arrays;
import java.util.function.LongUnaryOperator;

/**
 * A job's ticks, as its {@code @Scheduled} makes them on every instance: for a catch-up, the scheduled fire times (epoch
 * milliseconds) no instance ran.
 */
public interface JobSchedule {

    /**
     * The latest ticks after {@code after} up to {@code upTo} (both in epoch milliseconds), at most {@code max} of them,
     * oldest first.
     */
    long[] latest(long after, long upTo, int max);

    /**
     * An {@code every} job's: its ticks count per interval of the epoch, the same on every instance whenever each one's
     * trigger fires (the start of each interval).
     */
    static JobSchedule every(long intervalMillis) {
        if (intervalMillis <= 0) {
            throw new IllegalArgumentException("An interval of " + intervalMillis + " ms has no ticks");
        }
        return before(time -> Math.floorDiv(time - 1, intervalMillis) * intervalMillis);
    }

    /**
     * The schedule whose latest tick before a time (epoch milliseconds) is {@code previous} of it ({@link Long#MIN_VALUE}
     * for none), walked back from the end of a range.
     */
    static JobSchedule before(LongUnaryOperator previous) {
        return (after, upTo, max) -> {
            long[] found = new long[Math.min(Math.max(0, max), 16)];
            int count = 0;
            for (long tick = previous.applyAsLong(upTo + 1); tick > after && count < max; tick = previous
                    .applyAsLong(tick)) {
                if (count == found.length) {
                    found = Arrays.copyOf(found, Math.min(max, count * 2));
                }
                found[count++] = tick;
            }
            long[] ticks = Arrays.copyOf(found, count);
            for (int i = 0, j = count - 1; i < j; i++, j--) { // oldest first
                long swap = ticks[i];
                ticks[i] = ticks[j];
                ticks[j] = swap;
            }
            return ticks;
        };
    }
}
