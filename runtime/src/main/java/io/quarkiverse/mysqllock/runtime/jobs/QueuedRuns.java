package io.quarkiverse.mysqllock.runtime.jobs;

import java.time.Instant;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.table.JobClaim;

/**
 * The queued runs of the jobs that queue one ({@code overlap=queue-one}). A tick that fires while a run of its job
 * lasts, anywhere in the fleet, is queued in the jobs table ({@link JobStore#queue}). The run that lasted looks for it
 * once it ended and released its lock, and launches one run for it. The tick that queued it launches one too, at once,
 * in case that run ended between the tick's wait and its queue. A queued run waits for no lock: whoever holds it is a
 * run of the job, which looks for the queued tick once it ended, or a newer tick's run, which makes it no longer due.
 * Of two queued runs, the one that takes the tick with the lock held ({@link JobStore#takeQueued}) runs it.
 */
final class QueuedRuns {

    private static final Logger LOG = Logger.getLogger(QueuedRuns.class);

    private final CatchUps launches;
    private final Executor worker;

    QueuedRuns(CatchUps launches, Executor worker) {
        this.launches = launches;
        this.worker = worker;
    }

    /**
     * Queues a claimed tick that found the job's lock busy: the run to launch once the tick is recorded
     * ({@link #launch}), or null when it is not queued (the job does not queue, the tick is no claimed one, or the
     * queue could not be written: then it is skipped as any busy tick).
     */
    JobTick queue(JobStore store, String name, String serverName, JobTick tick, JobClaim claim) {
        if (!tick.queuesOne() || claim == null) {
            return null;
        }
        try {
            store.queue(name, serverName, tick.tick());
        } catch (RuntimeException e) {
            LOG.warnf("Tick %s of job '%s' fired while a run lasted, and could not be queued: it is skipped. %s",
                    Instant.ofEpochMilli(tick.tick()), name, e.getMessage());
            return null;
        }
        JobTick run = JobTick.queued();
        tick.followedBy(run);
        return run;
    }

    /** Launches a queued run (on a worker thread). */
    void launch(String name, JobTick run) {
        launches.launch(name, run);
    }

    /**
     * With the job's lock held, takes the queued tick a queued run runs for: false, the lock released and the run told,
     * when none is due.
     */
    boolean taken(JobStore store, String name, String serverName, JobTick tick, ControlledHandle handle) {
        long queued;
        try {
            queued = store.queued(name, serverName);
            if (queued == 0 || !store.takeQueued(name, serverName, queued)) {
                handle.release();
                tick.told(null);
                return false;
            }
        } catch (RuntimeException e) {
            handle.release();
            LOG.debugf("A queued run of job '%s' could not take its tick: %s", name, e);
            tick.told(RunOutcome.NOT_ACQUIRED); // the run that holds the lock next looks for it again
            throw e;
        }
        tick.caughtUp(queued);
        return true;
    }

    /**
     * Once the run of {@code tick} ended and released its lock (after its {@code atLeastFor}), looks for a tick queued
     * meanwhile, off the thread that released it, and launches one run for it.
     */
    void after(JobStore store, String name, String serverName, JobTick tick) {
        JobTick next = JobTick.queued();
        tick.followedBy(next); // told either way, so that whoever waits for the run and what follows it is
        tick.afterRelease(() -> {
            try {
                worker.execute(() -> {
                    long queued;
                    try {
                        queued = store.queued(name, serverName);
                    } catch (RuntimeException e) {
                        LOG.warnf("Job '%s' could not look for a run queued while it ran (the next run looks): %s",
                                name, e.getMessage());
                        queued = 0;
                    }
                    if (queued == 0) {
                        next.outcome().complete(null);
                    } else {
                        launch(name, next);
                    }
                });
            } catch (RejectedExecutionException e) {
                next.outcome().complete(null); // shutting down
            }
        });
    }
}
