package io.quarkiverse.mysqllock.jobs;

import java.time.Instant;

/**
 * A scheduled job as the fleet knows it: its row of the jobs table. The times are the server's; null where there is none
 * yet.
 *
 * @param name the job's name (its lock's name)
 * @param state its state for the whole fleet
 * @param latestTick the latest tick claimed (the scheduled fire time), whichever instance claimed it
 * @param nextFire the trigger's next fire time, as the instance that claimed the latest tick saw it then (for an
 *        {@code every} job, that instance's: each counts its intervals from its own start); null if unknown
 * @param lastOutcome how its last run ended
 * @param lastStarted when its last run started
 * @param lastEnded when its last run ended
 * @param lastSuccess when a run of it last succeeded, anywhere in the fleet
 * @param lastFailure when a run of it last failed (or lost its lock), anywhere in the fleet
 */
public record JobInfo(String name, JobState state, Instant latestTick, Instant nextFire, RunOutcome lastOutcome,
        Instant lastStarted,
        Instant lastEnded, Instant lastSuccess, Instant lastFailure) {
}
