package io.quarkiverse.mysqllock.runtime.lease;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.runtime.engine.EngineHealth;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.table.ServerClock;

/**
 * The server-clock check. No lease is taken over by comparing two servers' clocks (observed expiry), except one whose
 * end lies further in the past than max-clock-skew (its holder long dead): a server whose clock runs ahead of this one's
 * by more than that could take a live holder's lease, so the readiness check goes down and the log says so. A server
 * ahead by less is logged as a warning (every 10 s, from the watchdog, once per episode): leases do not depend on it.
 * The health check also reports a server clock that did not advance like this instance's monotonic clock.
 */
final class ClockCheck {

    private static final Logger LOG = Logger.getLogger(LeaseEngine.class);
    private static final long SKEW_CHECK_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** A server clock ahead by more than this is worth a warning, though no lease depends on it. */
    static final long WARN_AHEAD_MICROS = TimeUnit.SECONDS.toMicros(1);

    private final ConnectionSource connections;
    private final ServerClock statements;
    /** quarkus.mysql-lock.lease.max-clock-skew. */
    private final long maxClockSkewNanos;
    private volatile long lastSkewCheckNanos = System.nanoTime() - SKEW_CHECK_NANOS;
    /** The last reading of how far ahead of this server another one's clock was seen, beyond the warning; or 0. */
    private volatile long aheadSeenMicros;

    /** A server clock reading and the local monotonic time it was taken at. */
    private record ClockSample(long serverMicros, long localNanos) {
    }

    private volatile ClockSample lastClockSample;
    /** Whether the last two checks found the clocks' rates apart (warned once per episode). */
    private volatile boolean rateApart;

    ClockCheck(ConnectionSource connections, ServerClock statements, long maxClockSkewNanos) {
        this.connections = connections;
        this.statements = statements;
        this.maxClockSkewNanos = maxClockSkewNanos;
    }

    /**
     * The database answers, and no server clock runs ahead or jumped forward beyond max-clock-skew (a lease renewed
     * before could look long dead); a server clock and this instance's clock running at different rates is logged.
     *
     * @param leasesHeldHere how many leases this instance holds, for the figures
     */
    EngineHealth health(IntSupplier leasesHeldHere) {
        Map<String, Object> data = new LinkedHashMap<>();
        long sent = System.nanoTime();
        long[] reading;
        try {
            reading = connections.query("(health)", "check the lock database", raw -> {
                long[] state = statements.serverTimeAndLeases(raw);
                long answeredAt = System.nanoTime();
                // the clock check on the same connection, after the round trip was measured
                return new long[] { state[0], state[1], answeredAt, statements.clockAheadMicros(raw) };
            });
        } catch (RuntimeException e) {
            return EngineHealth.down("the lock database does not answer: " + e.getMessage(), data);
        }
        long received = reading[2];
        long aheadMicros = reading[3];
        noteClockAhead(aheadMicros);
        long roundTripMicros = TimeUnit.NANOSECONDS.toMicros(received - sent);
        data.put("database round trip ms", roundTripMicros / 1000);
        data.put("leases held (all instances)", reading[1]);
        data.put("leases held by this instance", leasesHeldHere.getAsInt());
        data.put("server clock minus this instance's clock ms",
                (reading[0] - ServerClock.micros(Instant.now())) / 1000);
        data.put("latest take ahead of this server's clock ms", Math.max(0, aheadMicros) / 1000);
        if (aheadMicros > TimeUnit.NANOSECONDS.toMicros(maxClockSkewNanos)) {
            return EngineHealth.down(skewProblem(aheadMicros), data);
        }
        ClockSample previous = lastClockSample;
        ClockSample sample = new ClockSample(reading[0], sent);
        lastClockSample = sample;
        if (previous != null) {
            long localMicros = TimeUnit.NANOSECONDS.toMicros(sample.localNanos() - previous.localNanos());
            long drift = (sample.serverMicros() - previous.serverMicros()) - localMicros;
            data.put("server clock drift since the previous check ms", drift / 1000);
            noteRate(drift, roundTripMicros, localMicros);
            // Only a step forward beyond max-clock-skew matters: every lease written before it looks long dead after it.
            if (drift - roundTripMicros > TimeUnit.NANOSECONDS.toMicros(maxClockSkewNanos)) {
                return EngineHealth.down("the server clock jumped forward by " + drift / 1000 + " ms relative to this"
                        + " instance's clock since the previous check, " + localMicros / 1000 + " ms ago, more than"
                        + " quarkus.mysql-lock.lease.max-clock-skew=" + TimeUnit.NANOSECONDS.toMillis(maxClockSkewNanos)
                        + "ms: a lease renewed before the jump can look long dead, and be taken over while its holder"
                        + " still holds it. Check the database server's time synchronisation", data);
            }
        }
        return EngineHealth.up(data);
    }

    /**
     * Warns, once per episode, when the server's clock and this instance's monotonic clock ran at rates more than 1 %
     * apart between two checks a second or more apart: a step of the server's clock (harmless to leases), or a
     * monotonic clock running fast or slow here, which a take-over's margin (a twentieth of the lease) must cover.
     */
    private void noteRate(long driftMicros, long roundTripMicros, long localMicros) {
        boolean apart = localMicros >= 1_000_000 && Math.abs(driftMicros) - roundTripMicros > localMicros / 100;
        if (apart && !rateApart) {
            LOG.warnf("The database server's clock advanced %d ms while this instance's monotonic clock advanced %d ms:"
                    + " a server clock step, or a clock running at the wrong rate here. Take-overs of leases allow the"
                    + " instances' monotonic clocks to run at rates up to 5 %% apart; check the time synchronisation",
                    (localMicros + driftMicros) / 1000, localMicros / 1000);
        }
        rateApart = apart;
    }

    /** Checks the servers' clocks if the last check is 10 s old. Never throws. */
    void checkIfDue() {
        if (System.nanoTime() - lastSkewCheckNanos >= SKEW_CHECK_NANOS) {
            lastSkewCheckNanos = System.nanoTime();
            try {
                connections.query("(clock check)", "check the database servers' clocks", raw -> {
                    noteClockAhead(statements.clockAheadMicros(raw));
                    return null;
                });
            } catch (RuntimeException e) {
                LOG.debugf("Checking the servers' clocks failed: %s", e.getMessage());
            }
        }
    }

    /**
     * Logs a clock seen ahead, once per episode (a warning; beyond max-clock-skew the readiness problem), and when it
     * is back within a second.
     */
    private void noteClockAhead(long aheadMicros) {
        long boundMicros = TimeUnit.NANOSECONDS.toMicros(maxClockSkewNanos);
        long previous = aheadSeenMicros;
        LOG.debugf("Latest write in the lock table: %d ms in this server's future (max-clock-skew %d ms)",
                aheadMicros / 1000, boundMicros / 1000);
        if (aheadMicros > Math.min(boundMicros, WARN_AHEAD_MICROS)) {
            aheadSeenMicros = aheadMicros;
            boolean beyond = aheadMicros > boundMicros;
            if (previous == 0 || beyond && previous <= boundMicros) {
                LOG.warnf("%s", beyond ? skewProblem(aheadMicros)
                        : "A database server's clock runs ahead of this one's by at least " + aheadMicros / 1000
                                + " ms (a row written there lies in this server's future). Leases do not depend on it:"
                                + " a lease is taken over only once it was seen unrenewed for its whole length, or when"
                                + " it ended longer ago than quarkus.mysql-lock.lease.max-clock-skew="
                                + TimeUnit.NANOSECONDS.toMillis(maxClockSkewNanos) + "ms. Check the servers' time"
                                + " synchronisation (NTP)");
            }
        } else if (previous != 0) {
            aheadSeenMicros = 0;
            LOG.infof("No lock-table row lies in this server's future by more than %d ms any more",
                    Math.min(boundMicros, WARN_AHEAD_MICROS) / 1000);
        }
    }

    private String skewProblem(long aheadMicros) {
        return "a database server's clock runs ahead of this one's by at least " + aheadMicros / 1000 + " ms (a row"
                + " written there lies in this server's future), more than quarkus.mysql-lock.lease.max-clock-skew="
                + TimeUnit.NANOSECONDS.toMillis(maxClockSkewNanos) + "ms: a lease written here can look long dead"
                + " there, and be taken over while its holder still holds it. Synchronise the servers' clocks (NTP), or"
                + " raise max-clock-skew";
    }
}
