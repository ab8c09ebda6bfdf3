package org.acme;

import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;

/** A scheduled job of the fleet, and the calls that pause and resume it for every replica. */
@ApplicationScoped
public class NightlyReport {

    @Inject
    LockManager locks;

    final AtomicInteger runs = new AtomicInteger();

    // tag::job[]
    // nightly-report.cron=0 0 2 * * ? in application.properties
    @Scheduled(cron = "{nightly-report.cron}")
    @Locked(value = "cron:nightly-report", onBusy = OnBusy.SKIP)
    void run(ScheduledExecution execution) {
        // runs on one replica per tick; execution.getScheduledFireTime() is the tick
        runs.incrementAndGet();
    }
    // end::job[]

    // tag::control[]
    /** Before a schema migration: no replica starts the report until it is resumed. */
    public JobInfo pauseForMigration(String user) {
        return locks.jobs().pause("cron:nightly-report", user, "schema migration");
    }

    public JobInfo resumeAfterMigration(String user) {
        return locks.jobs().resume("cron:nightly-report", user, "migration done");
    }
    // end::control[]

    public int runs() {
        return runs.get();
    }
}
