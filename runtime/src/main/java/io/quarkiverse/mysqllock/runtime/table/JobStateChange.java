package io.quarkiverse.mysqllock.runtime.table;

import io.quarkiverse.mysqllock.jobs.JobAction;
import io.quarkiverse.mysqllock.jobs.JobState;

/**
 * What a change does to a job's state, the same for the jobs table and the in-memory engine: pause and resume make and
 * end a pause, disable and enable make and end a disabled job; a paused job is enabled by resume, a disabled one is not
 * resumed. A change to the state the job is already in changes nothing, and is recorded.
 *
 * @param from the state before
 * @param to the state after; null when the change is refused
 * @param refusal why the change is refused, for the caller's error; null when it is made
 */
public record JobStateChange(JobState from, JobState to, String refusal) {

    /** Between the states before and after, in the audit trail's detail. */
    public static final String ARROW = " -> ";

    /** The change {@code action} makes to job {@code job} in state {@code from}. */
    public static JobStateChange of(JobAction action, String job, JobState from) {
        return switch (action) {
            case PAUSE -> from == JobState.DISABLED
                    ? refused(from, "Job '" + job + "' is DISABLED: enable it first (a pause is for an active job)")
                    : new JobStateChange(from, JobState.PAUSED, null);
            case RESUME -> from == JobState.DISABLED
                    ? refused(from, "Job '" + job + "' is DISABLED: enable it (resume ends a pause)")
                    : new JobStateChange(from, JobState.ACTIVE, null);
            case DISABLE -> new JobStateChange(from, JobState.DISABLED, null);
            case ENABLE -> from == JobState.PAUSED
                    ? refused(from, "Job '" + job + "' is PAUSED: resume it (enable ends a disabled job)")
                    : new JobStateChange(from, JobState.ACTIVE, null);
            case RUN_NOW -> new JobStateChange(from, from, null); // whatever the state, as asked
        };
    }

    private static JobStateChange refused(JobState from, String why) {
        return new JobStateChange(from, null, why);
    }

    /** The audit trail's detail: {@code "ACTIVE -> PAUSED"}. */
    public String detail() {
        return from + ARROW + to;
    }
}
