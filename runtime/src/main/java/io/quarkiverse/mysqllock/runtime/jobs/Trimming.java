package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.jboss.logging.Logger;

/** A job's history trimmed ({@link JobStore#trim}) on a worker thread, never on the thread that ran the job. */
final class Trimming {

    private static final Logger LOG = Logger.getLogger(Trimming.class);

    private Trimming() {
    }

    static void later(JobStore store, String name, String serverName, Executor worker) {
        try {
            worker.execute(() -> {
                try {
                    store.trim(name, serverName);
                } catch (RuntimeException e) {
                    LOG.debugf("The history of job '%s' was not trimmed: %s", name, e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            // shutting down: the next run trims it
        }
    }
}
