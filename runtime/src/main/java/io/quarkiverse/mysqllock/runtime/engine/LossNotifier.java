package io.quarkiverse.mysqllock.runtime.engine;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;

/**
 * Marks locks lost and calls their listeners on threads of its own, so a slow listener delays no one (once the engine
 * is shut down, on the thread that found the loss).
 */
public final class LossNotifier implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(LossNotifier.class);

    private final ExecutorService listeners = Executors
            .newCachedThreadPool(ConnectionSource.daemonThreads("mysql-lock-lost-"));
    private final LockMetrics metrics;
    private final io.quarkiverse.mysqllock.LockMode engine;

    public LossNotifier(LockMetrics metrics, io.quarkiverse.mysqllock.LockMode engine) {
        this.metrics = metrics;
        this.engine = engine;
    }

    /** Marks the lock lost, logs it once and notifies each listener once. */
    public void lose(GrantedLock lock, LockLostException.Reason reason, String message, Throwable cause) {
        lose(lock, reason, message, cause, false);
    }

    /**
     * A release found that the lock had been lost while it was held: its listeners hear it, even though the holder
     * has just released it, because whatever it did under the lock may not have been exclusive.
     */
    public void loseAtRelease(GrantedLock lock, LockLostException.Reason reason, String message, Throwable cause) {
        lose(lock, reason, message, cause, true);
    }

    private void lose(GrantedLock lock, LockLostException.Reason reason, String message, Throwable cause,
            boolean atRelease) {
        LockLostException lost = new LockLostException(lock.name, reason, message, cause);
        List<Consumer<LockLostException>> toNotify = lock.markLost(lost, atRelease);
        if (lock.lost != lost) {
            return;
        }
        if (reason == LockLostException.Reason.SHUTDOWN) {
            LOG.info(message);
        } else {
            LOG.warn(message);
        }
        metrics.lost(engine, reason);
        for (Consumer<LockLostException> listener : toNotify) {
            Runnable notification = () -> {
                try {
                    listener.accept(lost);
                } catch (RuntimeException e) {
                    LOG.errorf(e, "An onLost listener of lock '%s' failed", lock.name);
                }
            };
            try {
                listeners.execute(notification);
            } catch (RejectedExecutionException e) {
                try {
                    notification.run(); // shut down: told here rather than never
                } catch (Error error) {
                    LOG.errorf(error, "An onLost listener of lock '%s' failed", lock.name);
                }
            }
        }
    }

    @Override
    public void close() {
        listeners.shutdown();
        try {
            listeners.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
