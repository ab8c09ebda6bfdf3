package io.quarkiverse.mysqllock.runtime.metrics;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;

/**
 * The metrics in Micrometer (loaded only when the application has {@code quarkus-micrometer}). Every meter is tagged
 * with {@code datasource} and {@code engine}, never with lock names:
 * <ul>
 * <li>{@code mysql.lock.acquisitions} (counter, tag {@code outcome}: acquired, busy, timeout, error)</li>
 * <li>{@code mysql.lock.wait} (timer with histogram, tag {@code outcome}): how long acquisitions waited</li>
 * <li>{@code mysql.lock.hold} (timer with histogram): how long locks were held</li>
 * <li>{@code mysql.lock.lost} (counter, tag {@code cause}: every {@link LockLostException.Reason} in lower case:
 * connection_lost, not_held, lease_expired, shutdown, read_only, membership_lost, cancelled)</li>
 * <li>{@code mysql.lock.held} and {@code mysql.lock.pinned.connections} (gauges)</li>
 * <li>{@code mysql.lock.method} (timer, tags {@code method}: {@code <class>#<method>}, and {@code outcome}: ran, failed,
 * lost, skipped, not_acquired): the calls of {@code @Locked} methods</li>
 * <li>{@code mysql.lock.renewals} (counter of leases renewed) and {@code mysql.lock.renewal.statements}</li>
 * <li>{@code mysql.lock.job.run} (timer, tags {@code job} and {@code outcome}): the runs of scheduled jobs, and the
 * ticks their claimer skipped</li>
 * <li>{@code mysql.lock.job.since.success} (gauge, tag {@code job}): seconds since a job last succeeded in the
 * fleet</li>
 * </ul>
 */
public final class MicrometerLockMetrics implements LockMetrics {

    private final MeterRegistry registry;
    private final String dataSource;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    /** The gauges that read this manager's engine, removed when it closes. */
    private final List<Meter> gauges = new CopyOnWriteArrayList<>();

    public MicrometerLockMetrics(MeterRegistry registry, String dataSource) {
        this.registry = registry;
        this.dataSource = dataSource;
    }

    /** On Quarkus's registries (the global composite Micrometer's extension fills). */
    public static LockMetrics forDataSource(String dataSource) {
        return new MicrometerLockMetrics(Metrics.globalRegistry, dataSource);
    }

    private Tags tags(LockMode engine) {
        return Tags.of("datasource", dataSource, "engine", engine == null ? "none" : engine.name().toLowerCase(Locale.ROOT));
    }

    @Override
    public void acquisition(LockMode engine, Outcome outcome, long waitNanos) {
        String tag = outcome.name().toLowerCase(Locale.ROOT);
        counters.computeIfAbsent("acquisitions " + engine + " " + tag, k -> Counter.builder("mysql.lock.acquisitions")
                .description("Lock acquisitions by outcome").tags(tags(engine)).tag("outcome", tag).register(registry))
                .increment();
        timers.computeIfAbsent("wait " + engine + " " + tag, k -> Timer.builder("mysql.lock.wait")
                .description("How long lock acquisitions waited").tags(tags(engine)).tag("outcome", tag)
                .publishPercentileHistogram().register(registry)).record(waitNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void method(String method, MethodOutcome outcome, long nanos) {
        String tag = outcome.name().toLowerCase(Locale.ROOT);
        timers.computeIfAbsent("method " + method + " " + tag, k -> Timer.builder("mysql.lock.method")
                .description("Calls of @Locked methods by outcome (ran, failed, lost, skipped, not_acquired), the"
                        + " acquisition included")
                .tag("datasource", dataSource).tag("method", method).tag("outcome", tag).register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void jobRun(String job, RunOutcome outcome, long nanos) {
        String tag = outcome.name().toLowerCase(Locale.ROOT);
        timers.computeIfAbsent("job " + job + " " + tag, k -> Timer.builder("mysql.lock.job.run")
                .description("Runs of scheduled jobs by outcome (succeeded, failed, lost, cancelled), and ticks their"
                        + " claimer skipped (skipped_busy, not_acquired, skipped_paused: 0 s)")
                .tag("datasource", dataSource).tag("job", job).tag("outcome", tag).register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void jobSilence(String job, Supplier<Duration> since) {
        gauges.add(Gauge.builder("mysql.lock.job.since.success", since, read -> {
            Duration value = read.get();
            return value == null ? Double.NaN : value.toNanos() / 1e9;
        }).description("Seconds since a run of the scheduled job last succeeded anywhere in the fleet (since it was"
                + " first claimed, if never)").baseUnit("seconds").strongReference(true).tag("datasource", dataSource)
                .tag("job", job).register(registry));
    }

    @Override
    public void held(LockMode engine, long holdNanos) {
        timers.computeIfAbsent("hold " + engine, k -> Timer.builder("mysql.lock.hold")
                .description("How long locks were held").tags(tags(engine)).publishPercentileHistogram()
                .register(registry)).record(holdNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void lost(LockMode engine, LockLostException.Reason cause) {
        String tag = cause.name().toLowerCase(Locale.ROOT);
        counters.computeIfAbsent("lost " + engine + " " + tag, k -> Counter.builder("mysql.lock.lost")
                .description("Locks lost while held, by cause").tags(tags(engine)).tag("cause", tag).register(registry))
                .increment();
    }

    @Override
    public void renewed(int leases) {
        counters.computeIfAbsent("renewals", k -> Counter.builder("mysql.lock.renewals")
                .description("Leases renewed").tags(tags(LockMode.LEASE)).register(registry)).increment(leases);
        counters.computeIfAbsent("renewal statements", k -> Counter.builder("mysql.lock.renewal.statements")
                .description("Renewal statements sent").tags(tags(LockMode.LEASE)).register(registry)).increment();
    }

    @Override
    public void engineChosen(LockMode engine, IntSupplier locksHeld, IntSupplier pinnedConnections) {
        gauges.add(Gauge.builder("mysql.lock.held", locksHeld, IntSupplier::getAsInt)
                .description("Locks this instance holds").strongReference(true).tags(tags(engine)).register(registry));
        gauges.add(Gauge.builder("mysql.lock.pinned.connections", pinnedConnections, IntSupplier::getAsInt)
                .description("Connections kept out of the pool while they hold named locks").strongReference(true)
                .tags(tags(engine)).register(registry));
    }

    @Override
    public void close() {
        for (Meter gauge : gauges) {
            registry.remove(gauge);
        }
        gauges.clear();
    }
}
