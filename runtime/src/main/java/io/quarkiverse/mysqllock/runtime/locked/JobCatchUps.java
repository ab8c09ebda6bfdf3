package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.quarkiverse.mysqllock.jobs.MissedTicks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;

/** Checks a job's missed-ticks settings at start, and sets its method's policy. */
final class JobCatchUps {

    /** The most runs a catch-up may make ({@code max-catch-up-runs}). */
    static final int MAX_RUNS = 1000;

    private JobCatchUps() {
    }

    /**
     * Sets the missed-ticks policy of the methods of job {@code name}: what is wrong with its settings, each naming the
     * key (none when they apply).
     */
    static List<String> check(String name, MySqlLockRuntimeConfig.JobSettings settings, List<LockedMethod> methods) {
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
        if (methods.size() > 1) {
            errors.add(key + "missed-ticks=" + policy + ": job '" + name + "' is the lock of several methods ("
                    + methods.stream().map(method -> method.key).toList() + "), and which one catches up is not"
                    + " clear. Give each its own lock name");
            return errors;
        }
        LockedMethod method = methods.get(0);
        if (!JobLaunches.launchable(method)) {
            errors.add(key + "missed-ticks=" + policy + ": " + method.description + " cannot run outside its schedule"
                    + " to catch up: " + JobLaunches.LAUNCHABLE);
            return errors;
        }
        try {
            method.catchUp(policy, window, settings.maxCatchUpRuns());
        } catch (RuntimeException e) { // a cron or time zone that does not parse
            errors.add(key + "missed-ticks=" + policy + ": " + e.getMessage());
        }
        return errors;
    }
}
