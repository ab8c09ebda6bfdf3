package io.quarkiverse.mysqllock.runtime.jobs;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How much of each job's run history is kept ({@code quarkus.mysql-lock.job-history.*}): the latest {@code keepRuns}
 * rows, none older than {@code keepFor}. The instance that ends a run of a job removes the job's older rows, in small
 * batches, at most every {@link #PERIOD} per job.
 */
public record HistoryRetention(int keepRuns, Duration keepFor) {

    /** The defaults of the configuration. */
    public static final HistoryRetention DEFAULT = new HistoryRetention(1000, Duration.ofDays(30));

    /** How often an instance looks at most for a job's rows to remove. */
    static final long PERIOD_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** The rows one statement removes at most: each is short, and locks little. */
    public static final int BATCH = 500;
    /** The batches one look removes at most: the rest waits for the next one. */
    public static final int MAX_BATCHES = 20;

    /**
     * @throws IllegalArgumentException naming the key of a value out of range
     */
    public HistoryRetention {
        if (keepRuns < 1) {
            throw new IllegalArgumentException("quarkus.mysql-lock.job-history.keep-runs=" + keepRuns
                    + " must be 1 or more: a job's history keeps at least its last run");
        }
        if (keepFor == null || keepFor.compareTo(Duration.ofMinutes(1)) < 0) {
            throw new IllegalArgumentException("quarkus.mysql-lock.job-history.keep-for=" + keepFor
                    + " must be a minute or more");
        }
    }

    /** {@link #keepFor} in microseconds, as the server compares times; at most a hundred years (kept "for ever"). */
    public long keepForMicros() {
        Duration kept = keepFor.compareTo(FOR_EVER) > 0 ? FOR_EVER : keepFor;
        return TimeUnit.SECONDS.toMicros(kept.getSeconds()) + kept.getNano() / 1000;
    }

    private static final Duration FOR_EVER = Duration.ofDays(36_500);
}
