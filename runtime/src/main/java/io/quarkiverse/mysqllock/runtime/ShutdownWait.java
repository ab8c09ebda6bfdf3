package io.quarkiverse.mysqllock.runtime;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.quarkus.runtime.ShutdownEvent;

/**
 * The start of the application's shutdown: every lock manager in use waits, up to {@code quarkus.mysql-lock.shutdown-wait},
 * for the locks work in progress still holds to be released ({@link MySqlLockManager#awaitWorkInProgress}). It must
 * come before Quarkus ends its beans: the datasources go then, and with them the sessions that hold NAMED locks, while
 * the worker threads that run the work end only after. Observed late, after the application's own observers (which may
 * end work of their own).
 */
@Singleton
public class ShutdownWait {

    /** Later than the application's observers ({@code Interceptor.Priority.APPLICATION + 500} by default). */
    static final int LATE = Integer.MAX_VALUE - 1000;

    void awaitWorkInProgress(@Observes @Priority(LATE) ShutdownEvent event) {
        long since = System.nanoTime(); // one wait for all of them: the managers' waits overlap
        MySqlLockManagerFactory.created().forEach(manager -> manager.awaitWorkInProgress(since));
    }
}
