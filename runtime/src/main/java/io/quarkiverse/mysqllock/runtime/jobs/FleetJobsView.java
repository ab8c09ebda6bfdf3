package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.jobs.FleetJobs;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;

/** {@link FleetJobs} over a manager's {@link JobStore}, in its namespace. */
final class FleetJobsView implements FleetJobs {

    private final Supplier<JobStore> store;
    private final Function<String, String> serverNames;
    private final Predicate<String> ours;
    private final Runnable checkBlockingAllowed;

    /**
     * @param serverNames a job's name as the server knows it (its row's key), checked as a lock name is
     * @param ours whether a row's key is of this instance's namespace
     * @param checkBlockingAllowed throws on an event loop
     */
    FleetJobsView(Supplier<JobStore> store, Function<String, String> serverNames, Predicate<String> ours,
            Runnable checkBlockingAllowed) {
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
}
