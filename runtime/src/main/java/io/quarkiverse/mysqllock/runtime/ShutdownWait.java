package io.quarkiverse.mysqllock.runtime;

import java.util.List;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.quarkus.runtime.ShutdownEvent;

/**
 * The start of the application's shutdown: every lock manager in use waits, up to {@code quarkus.mysql-lock.shutdown-wait},
 * for the locks work in progress still holds to be released ({@link MySqlLockManager#awaitWorkInProgress}), then ends
 * (releases what is left, telling its holders, and leaves its fleet). Both must come before Quarkus ends its beans:
 * the datasources go then, in an order ArC does not fix, and with them the sessions that hold NAMED locks, while the
 * worker threads that run the work end only after. A manager that ended with its bean could find its datasource closed:
 * its leases then lasted their ttl, and its fleet membership kept a fleet from changing engine for as long. Observed
 * late, after the application's own observers (which may end work of their own).
 */
@Singleton
public class ShutdownWait {

    /** Later than the application's observers ({@code Interceptor.Priority.APPLICATION + 500} by default). */
    static final int LATE = Integer.MAX_VALUE - 1000;

    void awaitWorkInProgress(@Observes @Priority(LATE) ShutdownEvent event) {
        long since = System.nanoTime(); // one wait for all of them: the managers' waits overlap
        List<MySqlLockManager> managers = MySqlLockManagerFactory.created();
        managers.forEach(manager -> manager.awaitWorkInProgress(since));
        managers.forEach(MySqlLockManager::close);
    }
}
