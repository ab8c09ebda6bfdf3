package io.quarkiverse.mysqllock.runtime.engine;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkus.runtime.configuration.ConfigurationException;

/**
 * Every timing of one manager, worked out and checked once ({@link #of}), so that no component derives one of its own
 * or takes them positionally. Four are configured; the others follow from them.
 * <p>
 * The inequalities that keep a lock exclusive, which {@link #of} checks or which hold by construction:
 * <ol>
 * <li>{@code 2 x (renewInterval + lossMargin) <= ttl}: two renewal intervals, and a loss margin of room for the
 * renewals' statements and their scheduling (they run with a fixed delay after the last one ended), fit before the
 * holder counts its lease lost (its own loss margin before the end), so that one renewal that fails, or comes late,
 * costs no lease. Checked.</li>
 * <li>{@code lossMargin = min(ttl / 10, 250 ms) > 0}: a holder counts its lease lost this much before its confirmed end
 * by its own monotonic clock, which it read before sending the statement that set the end ({@link #lossMargin}).</li>
 * <li>{@code watchMargin(length) = max(lossMargin(length), length / 20)}: a watcher waits this much longer than a
 * lease's length after it first saw a version before it takes the lease over, so that monotonic clocks running 5 %
 * apart still see the holder give up first ({@link #watchMargin}).</li>
 * <li>{@code memberTtl = max(ttl, 3 x keepalive) + membershipClockMargin}: a membership of the fleet outlives three
 * renewals of either engine and a lease. It ends by a server's clock, unlike a lease, so under LEASE it counts as lapsed
 * {@code membershipClockMargin + 2 x expiryCheck} before its end (NAMED: one keepalive interval), and lasts the clock
 * margin longer to make up for it ({@link #membershipMarginNanos}). Under LEASE, what is left is at least
 * {@code ttl - lossMargin}: like a lease, the membership is renewed twice before it counts as lapsed, whatever the
 * keepalive.</li>
 * <li>{@code leaderWindow = 2 x keepalive}: a NAMED leader may still believe it leads this long after its session
 * ended, so a new term is confirmed only after it.</li>
 * <li>{@code maxClockSkew >= 0}: a row is taken over on a server's clock only once it ended longer ago than this.</li>
 * </ol>
 * <p>
 * Made only by {@link #of}, so that no unchecked timings exist.
 */
public final class LockTimings {

    /** The shortest lease ttl: shorter ones leave no room for the margins. */
    public static final Duration MIN_TTL = Duration.ofMillis(500);
    /**
     * How much earlier than its end by the server's clock a LEASE instance's membership counts as lapsed (at most a tenth
     * of the ttl): membership rows, unlike leases, end by the server's clock.
     */
    public static final Duration MEMBERSHIP_CLOCK_MARGIN = Duration.ofMillis(200);
    private static final long MAX_LOSS_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final long MIN_CHECK_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final Duration keepalive;
    private final Duration ttl;
    private final Duration renewInterval;
    private final Duration maxClockSkew;

    private LockTimings(Duration keepalive, Duration ttl, Duration renewInterval, Duration maxClockSkew) {
        this.keepalive = keepalive;
        this.ttl = ttl;
        this.renewInterval = renewInterval;
        this.maxClockSkew = maxClockSkew;
    }

    /** {@code named.keepalive-interval}: how often NAMED checks its sessions and renews its membership. */
    public Duration keepalive() {
        return keepalive;
    }

    /** {@code lease.ttl}: a lease's length. */
    public Duration ttl() {
        return ttl;
    }

    /** {@code lease.renew-interval}: how often LEASE renews its leases and its membership. */
    public Duration renewInterval() {
        return renewInterval;
    }

    /** {@code lease.max-clock-skew}: the largest disagreement between servers' clocks allowed for. */
    public Duration maxClockSkew() {
        return maxClockSkew;
    }

    /**
     * The timings of these settings, checked.
     *
     * @param renewInterval empty for the default, a third of the ttl
     * @param key the configuration key of a setting named relatively ({@code lease.ttl}), for the messages
     * @throws ConfigurationException naming the key when a value breaks an inequality above
     */
    public static LockTimings of(Duration keepalive, Duration ttl, Optional<Duration> renewInterval, Duration maxClockSkew,
            UnaryOperator<String> key) {
        requirePositive(key.apply("named.keepalive-interval"), keepalive);
        if (ttl.compareTo(MIN_TTL) < 0) {
            throw new ConfigurationException(key.apply("lease.ttl") + "=" + ttl + " must be at least " + MIN_TTL);
        }
        Duration renew = renewInterval.orElse(ttl.dividedBy(3));
        requirePositive(key.apply("lease.renew-interval"), renew);
        if (renew.compareTo(ttl) >= 0) {
            throw new ConfigurationException(key.apply("lease.renew-interval") + "=" + renew + " must be shorter than "
                    + key.apply("lease.ttl") + "=" + ttl + ", or leases expire before they are renewed");
        }
        if (maxClockSkew.isNegative()) {
            throw new ConfigurationException(key.apply("lease.max-clock-skew") + "=" + maxClockSkew
                    + " must not be negative");
        }
        Duration holderMargin = Duration.ofNanos(lossMargin(ttl.toNanos()));
        Duration longest = ttl.dividedBy(2).minus(holderMargin);
        if (renew.compareTo(longest) > 0) {
            throw new ConfigurationException(key.apply("lease.renew-interval") + "=" + renew.toMillis()
                    + "ms leaves no time for a second renewal: a holder counts its lease lost " + holderMargin.toMillis()
                    + " ms before its end (a tenth of " + key.apply("lease.ttl") + "=" + ttl.toMillis() + "ms, at most"
                    + " 250 ms), and two renewal intervals and as much again of room for their statements must fit"
                    + " before then, so that one renewal that fails or comes late costs no lease. Set "
                    + key.apply("lease.renew-interval") + " to at most " + longest.toMillis() + "ms (unset, it is a"
                    + " third of the ttl), or raise " + key.apply("lease.ttl") + " to at least "
                    + renew.plus(holderMargin).multipliedBy(2).toMillis() + "ms");
        }
        return new LockTimings(keepalive, ttl, renew, maxClockSkew);
    }

    /** How long before its confirmed end a holder counts a lease of this length lost: a tenth, at most 250 ms. */
    public static long lossMargin(long ttlNanos) {
        return Math.min(MAX_LOSS_MARGIN_NANOS, ttlNanos / 10);
    }

    /**
     * How much longer than a lease of this length a watcher waits, after it first saw a version, before it takes it
     * over: the loss margin, and at least a twentieth of the length. With the holder's own margin, the two processes'
     * monotonic clocks may run at rates 5 % apart (NTP slewing both the wrong way, a VM's clock catching up) before a
     * take-over could come before the holder counts its lease lost.
     */
    public static long watchMargin(long lengthNanos) {
        return Math.max(lossMargin(lengthNanos), lengthNanos / 20);
    }

    public long ttlNanos() {
        return ttl.toNanos();
    }

    public long renewIntervalNanos() {
        return renewInterval.toNanos();
    }

    public long keepaliveNanos() {
        return keepalive.toNanos();
    }

    /** The loss margin of this manager's leases ({@link #lossMargin(long)} of the ttl). */
    public long lossMarginNanos() {
        return lossMargin(ttlNanos());
    }

    /** How often LEASE checks its leases for one about to pass its loss margin: twice per margin, 5 ms at least. */
    public long expiryCheckNanos() {
        return Math.max(MIN_CHECK_PERIOD_NANOS, Math.min(renewIntervalNanos(), lossMarginNanos() / 2));
    }

    public long maxClockSkewMicros() {
        return TimeUnit.NANOSECONDS.toMicros(maxClockSkew.toNanos());
    }

    /** How much earlier than its end by the server's clock a LEASE membership counts as lapsed: 200 ms, at most ttl/10. */
    public Duration membershipClockMargin() {
        Duration tenth = ttl.dividedBy(10);
        return MEMBERSHIP_CLOCK_MARGIN.compareTo(tenth) <= 0 ? MEMBERSHIP_CLOCK_MARGIN : tenth;
    }

    /** How long a membership of the fleet lasts unless renewed: the longer of the ttl and 3 keepalives, plus the margin. */
    public long memberTtlNanos() {
        Duration renewals = keepalive.multipliedBy(3);
        return (ttl.compareTo(renewals) >= 0 ? ttl : renewals).plus(membershipClockMargin()).toNanos();
    }

    /**
     * How long before its end an engine counts its membership as lapsed: at least twice as long as the period of the
     * check that finds the lapse by the clock (NAMED: half a keepalive; LEASE: the expiry check), and under LEASE, whose
     * membership ends by the server's clock unlike its leases, the clock margin too. Never the renewal interval: a
     * membership must outlast two of its renewals, as a lease does.
     */
    public long membershipMarginNanos(LockMode mode) {
        return mode == LockMode.NAMED ? keepaliveNanos() : membershipClockMargin().toNanos() + 2 * expiryCheckNanos();
    }

    /** How long a NAMED leader may still believe it leads after its session ended: two keepalive intervals. */
    public Duration leaderWindow() {
        return keepalive.multipliedBy(2);
    }

    private static void requirePositive(String property, Duration value) {
        if (value.isZero() || value.isNegative()) {
            throw new ConfigurationException(property + "=" + value + " must be positive");
        }
    }
}
