package io.quarkiverse.mysqllock.it;

import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;

/**
 * The fault suite's scheduled job ({@code fault-worker.workload=jobs}): every instance schedules it
 * ({@code fault-worker.job-cron}, off unless set), one runs each tick. Each run is journaled as a critical section on
 * the job's lock, fenced and written like the others, after a {@code T} line that says which tick it ran and why:
 * {@code scheduled}, {@code catch_up}, {@code queued} or {@code run_now} (its trigger's prefix).
 */
@Singleton
public class FaultJobs {

    /** The job's lock name: the scenario's only hot name. */
    public static final String JOB = "job:tick";

    @Inject
    FaultWorker worker;
    @Inject
    FaultJournal journal;

    @ConfigProperty(name = "fault-worker.id", defaultValue = "w")
    String id;

    private final AtomicLong runs = new AtomicLong();

    @Scheduled(cron = "${fault-worker.job-cron:off}", identity = "fault-job")
    @Locked(value = JOB, onBusy = OnBusy.SKIP)
    void tick(ScheduledExecution execution) {
        String trigger = execution.getTrigger() == null ? "" : execution.getTrigger().getId();
        String kind = trigger.startsWith("catch_up:") || trigger.startsWith("queued:") || trigger.startsWith("run_now:")
                ? trigger.substring(0, trigger.indexOf(':'))
                : "scheduled";
        String section = id + "-tjob-" + runs.incrementAndGet();
        journal.write("T", section, execution.getScheduledFireTime().toEpochMilli(), kind);
        worker.underApi(section, JOB, Runnable::run);
    }
}
