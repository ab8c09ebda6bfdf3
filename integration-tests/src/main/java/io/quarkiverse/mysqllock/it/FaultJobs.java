package io.quarkiverse.mysqllock.it;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InterceptorBinding;
import jakarta.interceptor.InvocationContext;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkus.scheduler.Scheduled;
import io.quarkus.scheduler.ScheduledExecution;

/**
 * The fault suite's scheduled job ({@code fault-worker.workload=jobs}): every instance schedules it
 * ({@code fault-worker.job-cron}, off unless set), one runs each tick. Each run is journaled as a critical section on
 * the job's lock, fenced and written like the others, after a {@code T} line that says which tick it ran and why:
 * {@code scheduled}, {@code catch_up}, {@code queued} or {@code run_now} (its trigger's prefix). A run learns of a loss
 * of its lock as the application's job would, from the {@code LockLostException} its {@code @Locked} method throws:
 * journaled as an {@code L} line ({@link JournalsLoss}), whichever path ran it (the scheduler, a catch-up, a run-now).
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
    @JournalsLoss
    void tick(ScheduledExecution execution) {
        String trigger = execution.getTrigger() == null ? "" : execution.getTrigger().getId();
        String kind = trigger.startsWith("catch_up:") || trigger.startsWith("queued:") || trigger.startsWith("run_now:")
                ? trigger.substring(0, trigger.indexOf(':'))
                : "scheduled";
        String section = id + "-tjob-" + runs.incrementAndGet();
        LossJournal.SECTION.set(section);
        journal.write("T", section, execution.getScheduledFireTime().toEpochMilli(), kind);
        worker.underApi(section, JOB, Runnable::run);
    }

    /** Journals the loss a job's run is told of, outside its {@code @Locked} interceptor, which throws it. */
    @InterceptorBinding
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ ElementType.METHOD, ElementType.TYPE })
    public @interface JournalsLoss {
    }

    @JournalsLoss
    @Interceptor
    @Priority(Interceptor.Priority.APPLICATION)
    public static class LossJournal {

        /** The section of the run on this thread, set by the run inside the lock. */
        static final ThreadLocal<String> SECTION = new ThreadLocal<>();

        @Inject
        FaultJournal journal;

        @AroundInvoke
        Object journalLoss(InvocationContext context) throws Exception {
            try {
                return context.proceed();
            } catch (RuntimeException e) {
                // the loss itself, or carried by the method's own failure
                LockLostException lost = e instanceof LockLostException loss ? loss
                        : (LockLostException) java.util.Arrays.stream(e.getSuppressed())
                                .filter(LockLostException.class::isInstance).findFirst().orElse(null);
                String section = SECTION.get();
                if (lost != null && section != null) {
                    journal.write("L", section, FaultJournal.now(), lost.reason());
                }
                throw e;
            } finally {
                SECTION.remove();
            }
        }
    }
}
