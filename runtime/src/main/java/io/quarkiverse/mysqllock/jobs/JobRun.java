package io.quarkiverse.mysqllock.jobs;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * One row of a scheduled job's history: a run, or a tick skipped.
 *
 * @param job the job's name (its lock's name)
 * @param tick the scheduled fire time it ran for
 * @param kind why it ran
 * @param outcome how it ended, or why it did not run
 * @param instance the holder identity of the instance that ran it ({@code <host>/<pid>/<instance-id>})
 * @param startedAt when it started (the server's clock)
 * @param endedAt when it ended; null while it runs
 * @param errorClass the class of what it threw; null unless it failed
 * @param errorMessage the first line of what it threw (at most 1,000 characters); null unless it failed with a message
 */
public record JobRun(String job, Instant tick, RunKind kind, RunOutcome outcome, String instance, Instant startedAt,
        Instant endedAt, String errorClass, String errorMessage) {

    /** How long it ran; empty while it runs. */
    public Optional<Duration> duration() {
        return endedAt == null ? Optional.empty() : Optional.of(Duration.between(startedAt, endedAt));
    }
}
