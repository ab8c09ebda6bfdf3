package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.jobs.FleetJobs;
import io.quarkiverse.mysqllock.jobs.JobAction;
import io.quarkiverse.mysqllock.jobs.JobChange;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.jobs.RunKind;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.table.AuditTable;
import io.quarkiverse.mysqllock.runtime.table.JobStateChange;

/** {@link FleetJobs} over a manager's {@link JobStore}, in its namespace. */
final class FleetJobsView implements FleetJobs {

    private final Supplier<JobStore> store;
    private final Function<String, String> serverNames;
    private final Predicate<String> ours;
    private final Runnable checkBlockingAllowed;
    private final Launches launches;

    /** What runs a job of this application now, for the manager of {@code dataSource}. */
    record Launches(String dataSource, Supplier<JobLauncher> launcher, Function<String, String> tickRows) {
    }

    /**
     * @param serverNames a job's name as the server knows it (its row's key), checked as a lock name is
     * @param ours whether a row's key is of this instance's namespace
     * @param checkBlockingAllowed throws on an event loop
     */
    FleetJobsView(Supplier<JobStore> store, Function<String, String> serverNames, Predicate<String> ours,
            Runnable checkBlockingAllowed, Launches launches) {
        this.launches = launches;
        this.store = store;
        this.serverNames = serverNames;
        this.ours = ours;
        this.checkBlockingAllowed = checkBlockingAllowed;
    }

    @Override
    public List<JobInfo> jobs() {
        checkBlockingAllowed.run();
        List<JobInfo> jobs = new ArrayList<>();
        store.get().read(null, (key, job) -> {
            if (ours.test(key)) {
                jobs.add(job);
            }
        });
        return jobs;
    }

    @Override
    public Optional<JobInfo> job(String name) {
        String key = serverNames.apply(name);
        checkBlockingAllowed.run();
        List<JobInfo> found = new ArrayList<>(1);
        store.get().read(key, (ignored, job) -> found.add(job));
        return found.stream().findFirst();
    }

    @Override
    public List<JobRun> history(String name, int limit) {
        String key = serverNames.apply(name);
        if (limit < 1) {
            throw new IllegalArgumentException("A job's history is read " + limit + " rows at a time: ask for 1 or more");
        }
        checkBlockingAllowed.run();
        return store.get().history(name, key, limit);
    }

    @Override
    public JobInfo pause(String name, String by, String why) {
        return change(name, JobAction.PAUSE, by, why);
    }

    @Override
    public JobInfo resume(String name, String by, String why) {
        return change(name, JobAction.RESUME, by, why);
    }

    @Override
    public JobInfo disable(String name, String by, String why) {
        return change(name, JobAction.DISABLE, by, why);
    }

    @Override
    public JobInfo enable(String name, String by, String why) {
        return change(name, JobAction.ENABLE, by, why);
    }

    @Override
    public CompletionStage<RunOutcome> runNow(String name, String by, String why) {
        String key = checked(name, JobAction.RUN_NOW, by, why);
        JobLauncher launcher = launches.launcher().get();
        if (launcher == null) {
            throw new IllegalArgumentException("This application has no job '" + name + "' to run now: it has no"
                    + " scheduled job at all (a @Locked method with a ScheduledExecution parameter)");
        }
        launcher.check(launches.dataSource(), name);
        store.get().ranNow(name, key, by, why);
        // callers wait for it, and cannot complete it in the run's place
        return launcher.launch(launches.dataSource(), name,
                new JobTick(System.currentTimeMillis(), RunKind.RUN_NOW, new CompletableFuture<>()))
                .toCompletableFuture().minimalCompletionStage();
    }

    /** Checks a change's request: the job's key. */
    private String checked(String name, JobAction action, String by, String why) {
        String key = serverNames.apply(name);
        if (by == null || by.isBlank() || by.length() > AuditTable.ACTOR_LENGTH) {
            throw new IllegalArgumentException("Say who asks to " + verb(action) + " job '" + name
                    + "' (by: a user's or a service's name, 1 to " + AuditTable.ACTOR_LENGTH + " characters, not blank)");
        }
        if (why != null && why.length() > AuditTable.REASON_LENGTH) {
            throw new IllegalArgumentException("The reason to " + verb(action) + " job '" + name + "' has "
                    + why.length() + " characters: at most " + AuditTable.REASON_LENGTH);
        }
        checkBlockingAllowed.run();
        return key;
    }

    private JobInfo change(String name, JobAction action, String by, String why) {
        String key = checked(name, action, by, why);
        JobStateChange change = store.get().change(name, key, action, by, why);
        JobLauncher launcher = launches.launcher().get();
        if (change == null && launcher != null && launcher.has(launches.dataSource(), name)) {
            // a job of this application that has not ticked yet: its row made as its first tick would
            store.get().seed(name, key, launches.tickRows().apply(name));
            change = store.get().change(name, key, action, by, why);
        }
        if (change == null) {
            throw new IllegalArgumentException("The fleet has no job '" + name + "' to " + verb(action)
                    + ", and neither has this application (jobs in the jobs table: "
                    + jobs().stream().map(JobInfo::name).toList() + ")");
        }
        if (change.refusal() != null) {
            throw new IllegalStateException(change.refusal());
        }
        String made = change.detail();
        return job(name).orElseThrow(() -> new IllegalStateException("Job '" + name + "' was changed (" + made
                + ") and its row is gone since: deleted by hand?"));
    }

    private static String verb(JobAction action) {
        return action == JobAction.RUN_NOW ? "run now" : action.name().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public List<JobChange> changes(String name, int limit) {
        String key = serverNames.apply(name);
        if (limit < 1) {
            throw new IllegalArgumentException("A job's changes are read " + limit + " at a time: ask for 1 or more");
        }
        checkBlockingAllowed.run();
        return store.get().changes(name, key, limit);
    }
}
