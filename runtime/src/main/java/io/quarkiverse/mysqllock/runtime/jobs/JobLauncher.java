package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.concurrent.CompletionStage;

import io.quarkiverse.mysqllock.jobs.RunOutcome;

/**
 * Runs a scheduled job of this application outside its schedule, through its {@code @Locked} method (so with its lock,
 * and recorded in its history): implemented where the methods are known ({@code locked/JobLaunches}).
 */
public interface JobLauncher {

    /** Whether this application has the job, with its lock on {@code dataSource}. */
    boolean has(String dataSource, String name);

    /**
     * Checks that this application has the job, for the manager of {@code dataSource}, and that it can be run outside
     * its schedule.
     *
     * @throws IllegalArgumentException saying why not
     */
    void check(String dataSource, String name);

    /**
     * Runs the job once, now, on a worker thread: completed with how the run ended, or why it did not run (its lock
     * busy past its wait).
     */
    CompletionStage<RunOutcome> launch(String dataSource, String name, JobTick tick);
}
