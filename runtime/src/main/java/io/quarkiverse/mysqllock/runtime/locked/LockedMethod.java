package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.jobs.MissedTicks;
import io.quarkiverse.mysqllock.runtime.jobs.CatchUp;
import io.quarkiverse.mysqllock.runtime.jobs.JobSchedule;
import io.quarkiverse.mysqllock.runtime.jobs.JobTick;

/** Everything the interceptor needs about one {@code @Locked} method, decided at build time. */
public final class LockedMethod {

    private final String fixedName;
    private final LockNameResolver resolver;
    /** The durations as written, and {@code interruptOnLoss}. */
    private final Durations durations;
    /**
     * {@code waitFor}, {@code atLeastFor}, {@code atMostFor} and {@code interruptOnLoss}: what a programmatic caller
     * asks with; set at start when a duration holds a config expression.
     */
    volatile LockOptions options;
    /**
     * An {@code every} job's interval in milliseconds: its ticks are counted per interval of the epoch, the same on every
     * instance whenever each one's trigger fires; 0 for a cron job, whose fire times are the same everywhere.
     */
    private volatile long tickSlotMillis;
    final OnBusy onBusy;
    final Locked.Mode mode;
    /** {@link Locked.Mode#PERMIT}: the semaphore's permits. */
    final int permits;
    final ReturnKind kind;
    final String description;
    /** {@code <class>#<method>} */
    final String key;
    /**
     * The index of the {@code ScheduledExecution} parameter of an exclusive scheduled method (or one with
     * {@code onBusy = SKIP}), whose ticks are claimed so that each runs once across the cluster; -1 for none.
     */
    final int tickParameter;
    /** The index of the {@code LockHandle} parameter the interceptor gives the method's lock to; -1 for none. */
    final int handleParameter;
    /** The datasource whose manager takes the lock; null for the lock datasource's. */
    final String dataSource;
    /** A tick-claiming method's one {@code @Scheduled} cron, as written; null for none. */
    private final Cron cron;
    /** Its missed-ticks policy, set at start ({@link #catchUp}); null when it skips them. */
    private volatile CatchUp catchUp;
    /** Whether a tick that fires while a run lasts queues one run ({@code overlap=queue-one}), set at start. */
    private volatile boolean queueOne;
    /** Its method, once {@link JobLaunches} found it (it runs outside its schedule); null before. */
    volatile java.lang.reflect.Method launchMethod;

    /** A cron schedule as written: its expression and time zone (empty for the system's). */
    public record Cron(String expression, String timeZone) {
    }

    /** The members as written: a duration, or a {@code ${...}} config expression resolved at start. */
    /**
     * @param every the {@code every} of the method's {@code @Scheduled} when it claims ticks, else empty: its ticks are
     *        counted per interval
     */
    public record Durations(String waitFor, String atLeastFor, String atMostFor, boolean interruptOnLoss, String every) {
        /** Whether a member reads config: then the options are made at start, once the config can be read. */
        public boolean expressions() {
            return LockedOptions.isExpression(waitFor) || LockedOptions.isExpression(atLeastFor)
                    || LockedOptions.isExpression(atMostFor) || LockedOptions.isScheduledExpression(every);
        }
    }

    public LockedMethod(String fixedName, LockNameResolver resolver, Durations durations, OnBusy onBusy,
            Locked.Mode mode, int permits, ReturnKind kind, String description, String key, int tickParameter,
            int handleParameter, String dataSource, Cron cron) {
        this.dataSource = dataSource;
        this.cron = cron;
        this.tickParameter = tickParameter;
        this.handleParameter = handleParameter;
        this.key = key;
        this.fixedName = fixedName;
        this.resolver = resolver;
        this.durations = durations;
        this.onBusy = onBusy;
        this.mode = mode;
        this.permits = permits;
        this.kind = kind;
        this.description = description;
        // checked by the build already, unless they hold expressions
        if (!durations.expressions()) {
            resolveNow(property -> Optional.empty());
        }
    }

    private void resolveNow(Function<String, Optional<String>> config) {
        options = LockedOptions.options(description, durations.waitFor(), durations.atLeastFor(), durations.atMostFor(),
                durations.interruptOnLoss(), config);
        tickSlotMillis = LockedOptions.everyMillis(durations.every(), config);
    }

    /**
     * Resolves the durations' config expressions, if they have any.
     *
     * @throws IllegalArgumentException naming the method and the member
     */
    void resolve(Function<String, Optional<String>> config) {
        if (durations.expressions()) {
            resolveNow(config);
        }
    }

    Duration waitFor() {
        return options.waitTime().orElse(Duration.ZERO);
    }

    /**
     * The tick of this run: its scheduled fire time in epoch milliseconds, or for an {@code every} job the start of the
     * interval it falls in; or the tick of a run outside the schedule ({@link JobExecution}). Only when
     * {@code tickParameter >= 0}.
     */
    JobTick tick(Object[] arguments) {
        JobTick given = ScheduledTicks.given(arguments[tickParameter]);
        if (given != null) {
            // a run outside the schedule (JobLaunches), or a tick fired by hand, counted as the trigger's are
            return given.inInterval(tickSlotMillis).catchingUp(catchUp).queueingOne(queueOne);
        }
        long fireTime = ScheduledTicks.tick(arguments[tickParameter]);
        long slot = tickSlotMillis;
        return JobTick.scheduled(slot > 0 ? Math.floorDiv(fireTime, slot) * slot : fireTime,
                ScheduledTicks.nextFire(arguments[tickParameter])).catchingUp(catchUp).queueingOne(queueOne);
    }

    /**
     * Sets its missed-ticks policy, at start.
     *
     * @throws IllegalArgumentException when it cannot catch up: its ticks are not known (several schedules, or none)
     */
    void catchUp(MissedTicks policy, Duration window, int maxRuns) {
        if (policy == MissedTicks.SKIP) {
            catchUp = null;
            return;
        }
        long slot = tickSlotMillis;
        JobSchedule schedule = slot > 0 ? JobSchedule.every(slot)
                : cron == null ? null
                        : CronTicks.of(cron.expression(), cron.timeZone());
        if (schedule == null) {
            throw new IllegalArgumentException(description + " cannot catch up its missed ticks ("
                    + policy + "): its ticks are not known. A job that catches up has one @Scheduled, with an every or a"
                    + " cron that is not off");
        }
        catchUp = new CatchUp(policy, window, maxRuns, schedule);
    }

    /** Sets whether a tick that fires while a run of the job lasts queues one run ({@code overlap}), at start. */
    void queueOne(boolean queueOne) {
        this.queueOne = queueOne;
    }

    /** Whether its lock's name is built from its parameters ({@code {param}}), rather than written out. */
    boolean hasNameTemplate() {
        return resolver != null;
    }

    /** Whether it is a scheduled job (it claims its ticks) whose name is written out: its name, or null. */
    String jobName() {
        return tickParameter >= 0 && resolver == null ? fixedName : null;
    }

    String lockName(Object[] arguments) {
        return resolver == null ? fixedName : resolver.resolve(arguments);
    }
}
