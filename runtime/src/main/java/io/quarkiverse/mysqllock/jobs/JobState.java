package io.quarkiverse.mysqllock.jobs;

import java.util.Locale;

/** A scheduled job's state, the same for the whole fleet: every instance obeys it from its next tick. */
public enum JobState {
    /** Its ticks run. */
    ACTIVE,
    /** Its ticks are claimed and skipped, each recorded in its history ({@link RunOutcome#SKIPPED_PAUSED}). */
    PAUSED,
    /** Its ticks are claimed and skipped, unrecorded. */
    DISABLED;

    /**
     * The state a jobs table row names; a name this version does not know (written by a later one) reads as
     * {@link #DISABLED}, as its ticks behave.
     */
    public static JobState of(String name) {
        try {
            return name == null ? DISABLED : valueOf(name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return DISABLED;
        }
    }
}
