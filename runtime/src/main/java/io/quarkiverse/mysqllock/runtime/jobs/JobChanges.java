package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.Optional;

import io.quarkiverse.mysqllock.jobs.JobAction;
import io.quarkiverse.mysqllock.jobs.JobChange;
import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkiverse.mysqllock.runtime.table.AuditTable;
import io.quarkiverse.mysqllock.runtime.table.JobStateChange;

/** The rows of the audit trail that are changes of a job's state, read as {@link JobChange}s. */
final class JobChanges {

    private JobChanges() {
    }

    /**
     * The change a row of the audit trail records (a run-now's with the state the job was in); empty for a row of an
     * action this version does not know (written by a later one).
     *
     * @param job the job's name as the caller wrote it
     */
    static Optional<JobChange> of(String job, AuditTable.Entry entry) {
        JobAction action;
        try {
            action = JobAction.valueOf(entry.action());
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        String detail = entry.detail() == null ? "" : entry.detail();
        int arrow = detail.indexOf(JobStateChange.ARROW);
        JobState from = arrow < 0 ? null : JobState.of(detail.substring(0, arrow));
        JobState to = arrow < 0 ? null : JobState.of(detail.substring(arrow + JobStateChange.ARROW.length()));
        return Optional.of(new JobChange(job, action, from, to, entry.actor(), entry.reason(), entry.instance(),
                entry.at()));
    }
}
