package io.quarkiverse.mysqllock.runtime.health;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;

import io.quarkiverse.mysqllock.jobs.JobState;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManagerFactory;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;
import io.quarkiverse.mysqllock.runtime.jobs.JobSilences;
import io.smallrye.health.api.Wellness;

/**
 * Silence alerts (registered with the readiness check): DOWN when a scheduled job with an {@code alert-after}
 * ({@code quarkus.mysql-lock.jobs."job-name".alert-after}) has not succeeded anywhere in the fleet for that long, while
 * it is active. A wellness check, never readiness: a silent job must not take an instance out of the load balancer.
 */
@Wellness
@ApplicationScoped
public class MySqlLockJobsHealthCheck implements HealthCheck {

    static final String NAME = "MySQL/MariaDB scheduled jobs";

    @Inject
    MySqlLockRuntimeConfig config;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder builder = HealthCheckResponse.named(NAME).up();
        Map<String, Duration> watched = new TreeMap<>();
        config.jobs().forEach((job, settings) -> settings.alertAfter().ifPresent(after -> watched.put(job, after)));
        builder.withData("jobs watched", watched.size());
        if (watched.isEmpty()) {
            return builder.build();
        }
        // a job is one, whatever datasource its lock is on: the longest silence of any, where two have a row
        Map<String, JobSilences.Silence> silences = new HashMap<>();
        Duration started = Duration.ZERO;
        for (MySqlLockManager manager : MySqlLockManagerFactory.created()) {
            try {
                manager.jobSilences().forEach((job, silence) -> silences.merge(job, silence,
                        (one, other) -> one.sinceMicros() >= other.sinceMicros() ? one : other));
            } catch (RuntimeException e) {
                return builder.down().withData("reason", "The jobs table of datasource " + manager.dataSourceName()
                        + " could not be read, so whether the jobs ran is not known: " + e.getMessage()).build();
            }
            started = manager.age().compareTo(started) > 0 ? manager.age() : started;
        }
        Duration sinceStart = started;
        watched.forEach((job, after) -> {
            JobSilences.Silence silence = silences.get(job);
            if (silence == null) {
                boolean silent = sinceStart.compareTo(after) > 0;
                builder.withData(job, (silent ? "SILENT: " : "") + "no instance has claimed a tick of it in the "
                        + words(sinceStart) + " since this instance started (alert after " + words(after) + ")");
                if (silent) {
                    builder.down();
                }
            } else if (silence.state() != JobState.ACTIVE) {
                builder.withData(job, silence.state() + ": not watched while so");
            } else {
                Duration since = silence.now();
                boolean silent = since.compareTo(after) > 0;
                builder.withData(job, (silent ? "SILENT: " : "") + "no success in the last " + words(since)
                        + (silence.neverSucceeded() ? ", and never one" : "") + " (alert after " + words(after) + ")");
                if (silent) {
                    builder.down();
                }
            }
        });
        return builder.build();
    }

    /** A duration as a person reads it: {@code 3h 12m}, {@code 45s}. */
    static String words(Duration duration) {
        long seconds = duration.toSeconds();
        if (seconds < 60) {
            return seconds + "s";
        }
        long minutes = seconds / 60;
        if (minutes < 60) {
            return minutes + "m " + seconds % 60 + "s";
        }
        long hours = minutes / 60;
        return hours < 48 ? hours + "h " + minutes % 60 + "m" : hours / 24 + "d " + hours % 24 + "h";
    }
}
