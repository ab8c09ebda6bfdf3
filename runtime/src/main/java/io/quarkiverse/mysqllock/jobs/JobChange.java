package io.quarkiverse.mysqllock.jobs;

import java.time.Instant;

/**
 * A change made to a scheduled job for the whole fleet: a row of the audit trail.
 *
 * @param job the job's name (its lock's name)
 * @param action what was done
 * @param from the job's state before
 * @param to its state after (the same as {@code from} where it already was so)
 * @param by who asked, as they said
 * @param why why, as they said; null if they did not say
 * @param instance the holder identity of the instance that made the change
 * @param at when (the server's clock)
 */
public record JobChange(String job, JobAction action, JobState from, JobState to, String by, String why,
        String instance, Instant at) {
}
