package io.quarkiverse.mysqllock.runtime.devui;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.jobs.FleetJobs;
import io.quarkiverse.mysqllock.jobs.JobChange;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManagerFactory;
import io.smallrye.common.annotation.Blocking;

/**
 * The Dev UI's scheduled-jobs page (dev mode only): per lock datasource, the fleet's jobs with their state, last
 * outcome and recent runs; and pause, resume, disable, enable and run-now, each recorded in the audit trail as done by
 * {@value #BY}. Values are plain maps, lists, strings and numbers; an outcome is in the result, never an exception, so
 * the page can show it.
 */
public class MySqlLockJobsJsonRpcService {

    /** Who the audit trail says made a change from the Dev UI. */
    static final String BY = "Dev UI";
    /** The runs of a job the page shows. */
    static final int RUNS = 20;

    /** One entry per lock datasource in use, with its jobs. */
    @Blocking
    public List<Map<String, Object>> getJobs() {
        List<Map<String, Object>> managers = new ArrayList<>();
        for (MySqlLockManager manager : MySqlLockManagerFactory.created()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("datasource", manager.dataSourceName());
            List<Map<String, Object>> jobs = new ArrayList<>();
            try {
                FleetJobs fleet = manager.jobs();
                for (JobInfo job : fleet.jobs()) {
                    jobs.add(job(job, fleet.history(job.name(), RUNS), fleet.changes(job.name(), 5)));
                }
            } catch (RuntimeException e) {
                entry.put("problem", e.getMessage());
            }
            entry.put("jobs", jobs);
            managers.add(entry);
        }
        return managers;
    }

    /** {@code action}: pause, resume, disable, enable, or run-now. */
    @Blocking
    public Map<String, Object> changeJob(String datasource, String job, String action) {
        Map<String, Object> outcome = new LinkedHashMap<>();
        MySqlLockManager manager = MySqlLockManagerFactory.created(datasource).orElse(null);
        if (manager == null) {
            outcome.put("done", false);
            outcome.put("message", "No lock manager in use for datasource '" + datasource + "'");
            return outcome;
        }
        String why = "from the Dev UI";
        try {
            FleetJobs fleet = manager.jobs();
            String message = switch (action) {
                case "pause" -> "Job '" + job + "' is " + fleet.pause(job, BY, why).state();
                case "resume" -> "Job '" + job + "' is " + fleet.resume(job, BY, why).state();
                case "disable" -> "Job '" + job + "' is " + fleet.disable(job, BY, why).state();
                case "enable" -> "Job '" + job + "' is " + fleet.enable(job, BY, why).state();
                case "run-now" -> "Job '" + job + "' ran now: " + fleet.runNow(job, BY, why).toCompletableFuture()
                        .get(1, TimeUnit.MINUTES);
                default -> throw new IllegalArgumentException("No action '" + action + "': pause, resume, disable,"
                        + " enable or run-now");
            };
            outcome.put("done", true);
            outcome.put("message", message);
        } catch (java.util.concurrent.ExecutionException e) {
            outcome.put("done", false);
            outcome.put("message", String.valueOf(e.getCause().getMessage()));
        } catch (java.util.concurrent.TimeoutException e) {
            outcome.put("done", true);
            outcome.put("message", "Job '" + job + "' runs now, for more than a minute already: see its history");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            outcome.put("done", false);
            outcome.put("message", "Interrupted");
        } catch (RuntimeException e) {
            outcome.put("done", false);
            outcome.put("message", e.getMessage());
        }
        return outcome;
    }

    private static Map<String, Object> job(JobInfo job, List<JobRun> runs, List<JobChange> changes) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("name", job.name());
        entry.put("state", job.state().name());
        entry.put("latestTick", text(job.latestTick()));
        entry.put("nextFire", text(job.nextFire()));
        entry.put("lastOutcome", job.lastOutcome() == null ? null : job.lastOutcome().name());
        entry.put("lastSuccess", text(job.lastSuccess()));
        entry.put("lastFailure", text(job.lastFailure()));
        List<Map<String, Object>> history = new ArrayList<>();
        for (JobRun run : runs) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("tick", text(run.tick()));
            row.put("kind", run.kind().name());
            row.put("outcome", run.outcome().name());
            row.put("instance", run.instance());
            row.put("startedAt", text(run.startedAt()));
            row.put("millis", run.duration().map(Duration::toMillis).orElse(null));
            row.put("error", run.errorClass() == null ? null
                    : run.errorClass() + (run.errorMessage() == null ? "" : ": " + run.errorMessage()));
            history.add(row);
        }
        entry.put("runs", history);
        List<Map<String, Object>> audit = new ArrayList<>();
        for (JobChange change : changes) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("action", change.action().name());
            row.put("by", change.by());
            row.put("why", change.why());
            row.put("at", text(change.at()));
            audit.add(row);
        }
        entry.put("changes", audit);
        return entry;
    }

    private static String text(Instant instant) {
        return instant == null ? null : instant.toString();
    }
}
