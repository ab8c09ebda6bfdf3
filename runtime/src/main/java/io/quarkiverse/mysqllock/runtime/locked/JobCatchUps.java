package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.quarkiverse.mysqllock.jobs.MissedTicks;
import io.quarkiverse.mysqllock.jobs.Overlap;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;

/**
 * Checks a job's missed-ticks and overlap settings at start, and sets its method's policies: both run the method outside
 * its schedule (a catch-up, a queued run), which needs one method that can be so run.
 */
final class JobCatchUps {

    /** The most runs a catch-up may make ({@code max-catch-up-runs}). */
    static final int MAX_RUNS = 1000;

    private JobCatchUps() {
    }

    /**
     * Sets the missed-ticks and overlap policies of the methods of job {@code name}: what is wrong with its settings,
     * each naming the key (none when they apply).
     */
    static List<String> check(String name, MySqlLockRuntimeConfig.JobSettings settings, List<LockedMethod> methods) {
        List<String> errors = checkCatchUp(name, settings, methods);
        String key = "quarkus.mysql-lock.jobs.\"" + name + "\".overlap=queue-one: ";
        boolean queueOne = settings.overlap() == Overlap.QUEUE_ONE;
        if (!queueOne || methods.isEmpty()) {
            methods.forEach(method -> method.queueOne(false));
            return errors;
        }
        String runs = runsOutsideItsSchedule(name, methods);
        if (runs != null) {
            errors.add(key + runs);
        } else {
            methods.get(0).queueOne(true);
        }
        return errors;
    }

    /**
     * Why the job's method cannot run outside its schedule: it has several, or one that takes more than its
     * {@code ScheduledExecution}; null when it can.
     */
    private static String runsOutsideItsSchedule(String name, List<LockedMethod> methods) {
        if (methods.size() > 1) {
            return "job '" + name + "' is the lock of several methods (" + methods.stream().map(method -> method.key)
                    .toList() + "), and which one runs outside its schedule is not clear. Give each its own lock name";
        }
        LockedMethod method = methods.get(0);
        return JobLaunches.launchable(method) ? null
                : method.description + " cannot run outside its schedule: " + JobLaunches.LAUNCHABLE;
    }

    private static List<String> checkCatchUp(String name, MySqlLockRuntimeConfig.JobSettings settings,
            List<LockedMethod> methods) {
        String key = "quarkus.mysql-lock.jobs.\"" + name + "\".";
        List<String> errors = new ArrayList<>();
        Duration window = settings.catchUpWindow();
        if (window.compareTo(Duration.ofSeconds(1)) < 0) {
            errors.add(key + "catch-up-window is " + window + ": at least a second (1s)");
        }
        if (settings.maxCatchUpRuns() < 1 || settings.maxCatchUpRuns() > MAX_RUNS) {
            errors.add(key + "max-catch-up-runs is " + settings.maxCatchUpRuns() + ": from 1 to " + MAX_RUNS
                    + " (each run is one after the other: a longer backlog is work for a batch, not a catch-up)");
        }
        MissedTicks policy = settings.missedTicks();
        if (policy == MissedTicks.SKIP || !errors.isEmpty() || methods.isEmpty()) {
            return errors;
        }
        String runs = runsOutsideItsSchedule(name, methods);
        if (runs != null) {
            errors.add(key + "missed-ticks=" + policy + ": " + runs);
            return errors;
        }
        try {
            methods.get(0).catchUp(policy, window, settings.maxCatchUpRuns());
        } catch (RuntimeException e) { // a cron or time zone that does not parse
            errors.add(key + "missed-ticks=" + policy + ": " + e.getMessage());
        }
        return errors;
    }
}
