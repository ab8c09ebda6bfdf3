package io.quarkiverse.mysqllock.runtime.jobs;

import java.time.Instant;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockName;

/**
 * The queued runs of the jobs that queue one ({@code overlap=queue-one}). A tick that fires while a run of its job
 * lasts, anywhere in the fleet, is queued in the jobs table ({@link JobStore#queue}). The run that lasted looks for it
 * once it ended and released its lock, and launches one run for it. The instance that queued it watches it too: it
 * tries at once, in case that run ended between the tick's wait and its queue, then again, less and less often, while
 * the lock stays held, until a run took the tick or a newer claim passed it. So a queued tick runs even when the run
 * that held the lock could not look (its instance died or is stopping, it runs a version that does not queue, its
 * release ended later on another thread). A queued run waits for no lock: whoever holds it is watched. Of two queued
 * runs, the one that takes the tick with the lock held ({@link JobStore#takeQueued}) runs it.
 */
final class QueuedRuns {

    private static final Logger LOG = Logger.getLogger(QueuedRuns.class);
    /** The second look of the instance that queued a tick; each later one waits twice as long, up to the last. */
    static final long FIRST_WATCH_MILLIS = 1_000;
    static final long LAST_WATCH_MILLIS = 30_000;

    private final CatchUps launches;
    private final Executor worker;
    private final Supplier<LockEngine> engine;
    /** The jobs whose queued tick this instance watches, by their names on the server: one watch per job. */
    private final Set<String> watched = ConcurrentHashMap.newKeySet();
    private volatile boolean stopping;

    QueuedRuns(CatchUps launches, Executor worker, Supplier<LockEngine> engine) {
        this.launches = launches;
        this.worker = worker;
        this.engine = engine;
    }

    /** The application shuts down: no queued run is launched any more, and the watches end. */
    void stop() {
        stopping = true;
    }

    boolean stopping() {
        return stopping;
    }

    /**
     * Queues a claimed tick that found the job's lock busy: null once written; else why not. The claim is kept either
     * way: a write whose answer was lost may have queued it, and a tick given back could then run twice.
     */
    RuntimeException queue(JobStore store, String name, String serverName, JobTick tick) {
        try {
            store.queue(name, serverName, tick.tick());
            return null;
        } catch (RuntimeException e) {
            LOG.warnf("Tick %s of job '%s' fired while a run lasted, and could not be queued: %s",
                    Instant.ofEpochMilli(tick.tick()), name, e.getMessage());
            return e;
        }
    }

    /**
     * Watches the job's queued tick from this instance, the one that queued {@code tick}: a queued run at once, then
     * looks while the lock stays held, until the tick is taken or passed. Whoever waits for {@code tick} waits for the
     * first try.
     */
    void watch(JobStore store, String name, String serverName, JobTick tick) {
        JobTick first = JobTick.queued();
        tick.followedBy(first);
        if (stopping || !watched.add(serverName)) {
            first.outcome().complete(null); // watched already: that watch runs it
            return;
        }
        look(store, name, serverName, first, 0);
    }

    /**
     * One look of a watch, after {@code delayMillis}: the lock still held, another look later; the tick no longer due,
     * the watch ends; else a queued run, whose outcome says whether to look again (its lock was busy).
     */
    private void look(JobStore store, String name, String serverName, JobTick run, long delayMillis) {
        run.outcome().whenComplete((how, failure) -> {
            if (!stopping && (how == RunOutcome.SKIPPED_BUSY || how == RunOutcome.NOT_ACQUIRED)) {
                long next = Math.min(LAST_WATCH_MILLIS, Math.max(FIRST_WATCH_MILLIS, 2 * delayMillis));
                look(store, name, serverName, JobTick.queued(), next);
            } else {
                watched.remove(serverName);
            }
        });
        if (delayMillis == 0) {
            launch(name, run); // at once: the run that held the lock may have ended before the tick was queued
            return;
        }
        Runnable look = () -> {
            try {
                if (stopping) {
                    run.outcome().complete(null);
                } else if (engine.get().isLocked(new LockName(name, serverName))) {
                    run.outcome().complete(RunOutcome.SKIPPED_BUSY); // still held: that run lasts, look again later
                } else if (store.queued(name, serverName) == 0) {
                    run.outcome().complete(null); // taken, or passed by a newer claim
                } else {
                    launch(name, run);
                }
            } catch (RuntimeException e) {
                LOG.debugf("Job '%s' could not look for its queued run (again later): %s", name, e);
                run.outcome().complete(RunOutcome.NOT_ACQUIRED);
            }
        };
        try {
            CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS, worker).execute(look);
        } catch (RejectedExecutionException e) {
            run.outcome().complete(null); // shutting down
        }
    }

    /** Launches a queued run (on a worker thread). */
    private void launch(String name, JobTick run) {
        if (stopping) {
            run.outcome().complete(null);
            return;
        }
        launches.launch(name, run);
    }

    /**
     * With the job's lock held, takes the queued tick a queued run runs for, with a conditional write: of two queued
     * runs, one takes it. Null when none is due.
     */
    static Long take(JobStore store, String name, String serverName) {
        long queued = store.queued(name, serverName);
        return queued != 0 && store.takeQueued(name, serverName, queued) ? queued : null;
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
                        queued = stopping ? 0 : store.queued(name, serverName);
                    } catch (RuntimeException e) {
                        LOG.debugf("Job '%s' could not look for a run queued while it ran (its watch does): %s", name,
                                e.getMessage());
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
