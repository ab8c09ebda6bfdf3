package io.quarkiverse.mysqllock.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkus.runtime.configuration.ConfigurationException;

/** The timings of a manager: the defaults derived from four settings, and the inequalities checked once. */
class LockTimingsTest {

    private static final UnaryOperator<String> KEY = relative -> "quarkus.mysql-lock." + relative;
    private static final Duration KEEPALIVE = Duration.ofSeconds(5);

    private static LockTimings of(Duration ttl, Duration renew) {
        return LockTimings.of(KEEPALIVE, ttl, Optional.ofNullable(renew), Duration.ofSeconds(1), KEY);
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    @Test
    void theDefaultsFollowFromTheTtlAndTheKeepalive() {
        LockTimings timings = of(Duration.ofSeconds(30), null);

        assertThat(timings.renewInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(millis(timings.lossMarginNanos())).as("a tenth of the ttl, at most 250 ms").isEqualTo(250);
        assertThat(millis(timings.expiryCheckNanos())).as("twice per loss margin").isEqualTo(125);
        assertThat(timings.membershipClockMargin()).isEqualTo(Duration.ofMillis(200));
        assertThat(millis(timings.memberTtlNanos())).as("the longer of the ttl and 3 keepalives, plus the margin")
                .isEqualTo(30_200);
        assertThat(millis(timings.membershipMarginNanos(LockMode.NAMED))).isEqualTo(5_000);
        assertThat(millis(timings.membershipMarginNanos(LockMode.LEASE))).as("the clock margin and two expiry checks")
                .isEqualTo(450);
        assertThat(timings.leaderWindow()).isEqualTo(Duration.ofSeconds(10));
        assertThat(timings.maxClockSkewMicros()).isEqualTo(1_000_000);
    }

    @Test
    void shortTtlsScaleTheMarginsDown() {
        LockTimings timings = of(Duration.ofSeconds(1), Duration.ofMillis(300));

        assertThat(millis(timings.lossMarginNanos())).isEqualTo(100);
        assertThat(timings.membershipClockMargin()).isEqualTo(Duration.ofMillis(100));
        assertThat(millis(timings.memberTtlNanos())).as("three keepalives outlast the ttl").isEqualTo(15_100);
        assertThat(millis(LockTimings.watchMargin(TimeUnit.SECONDS.toNanos(20)))).as("a twentieth of a long lease")
                .isEqualTo(1_000);
        assertThat(millis(LockTimings.watchMargin(TimeUnit.SECONDS.toNanos(1)))).as("the loss margin of a short one")
                .isEqualTo(100);
    }

    @Test
    void everyRenewalComesBeforeItsHolderCountsTheLeaseLost() {
        for (long ttl = 500; ttl <= 120_000; ttl += 499) {
            LockTimings timings = of(Duration.ofMillis(ttl), null);
            assertThat(timings.renewIntervalNanos() + timings.lossMarginNanos()).as("ttl %d ms", ttl)
                    .isLessThan(timings.ttlNanos());
            assertThat(timings.expiryCheckNanos()).isPositive().isLessThanOrEqualTo(
                    Math.max(TimeUnit.MILLISECONDS.toNanos(5), timings.lossMarginNanos() / 2));
        }
    }

    @Test
    void settingsThatBreakAnInequalityAreRefusedNamingTheirKey() {
        assertThatThrownBy(() -> of(Duration.ofMillis(499), null)).isInstanceOf(ConfigurationException.class)
                .hasMessage("quarkus.mysql-lock.lease.ttl=PT0.499S must be at least PT0.5S");
        assertThatThrownBy(() -> of(Duration.ofSeconds(3), Duration.ofSeconds(3)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("quarkus.mysql-lock.lease.renew-interval=PT3S must be shorter than"
                        + " quarkus.mysql-lock.lease.ttl=PT3S");
        assertThatThrownBy(() -> of(Duration.ofSeconds(3), Duration.ofMillis(2_800)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("renew-interval=2800ms leaves no time for a second renewal");
        assertThatThrownBy(() -> of(Duration.ofSeconds(3), Duration.ZERO)).isInstanceOf(ConfigurationException.class)
                .hasMessage("quarkus.mysql-lock.lease.renew-interval=PT0S must be positive");
        assertThatThrownBy(() -> LockTimings.of(Duration.ZERO, Duration.ofSeconds(3), Optional.empty(), Duration.ZERO,
                relative -> "quarkus.mysql-lock.\"orders\"." + relative)).isInstanceOf(ConfigurationException.class)
                .hasMessage("quarkus.mysql-lock.\"orders\".named.keepalive-interval=PT0S must be positive");
        assertThatThrownBy(() -> LockTimings.of(KEEPALIVE, Duration.ofSeconds(3), Optional.empty(),
                Duration.ofMillis(-1), KEY)).isInstanceOf(ConfigurationException.class)
                .hasMessage("quarkus.mysql-lock.lease.max-clock-skew=PT-0.001S must not be negative");
    }

    @Test
    void theLongestAcceptedRenewalIntervalLeavesTimeForTwoRenewalsAndNoMore() {
        // the examples: a membership lapsed before each renewal came
        assertThatThrownBy(() -> of(Duration.ofSeconds(30), Duration.ofSeconds(15)))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("quarkus.mysql-lock.lease.renew-interval=15000ms leaves no time for a second renewal: a"
                        + " holder counts its lease lost 250 ms before its end (a tenth of quarkus.mysql-lock.lease.ttl"
                        + "=30000ms, at most 250 ms), and two renewal intervals and as much again of room for their"
                        + " statements must fit before then, so that one renewal that fails or comes late costs no"
                        + " lease. Set quarkus.mysql-lock.lease.renew-interval to at most 14750ms (unset, it is"
                        + " a third of the ttl), or raise quarkus.mysql-lock.lease.ttl to at least 30500ms");
        assertThatThrownBy(() -> of(Duration.ofSeconds(3), Duration.ofMillis(1_600)))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("at most 1250ms");
        assertThat(of(Duration.ofSeconds(3), Duration.ofMillis(1_250)).renewInterval()).isEqualTo(Duration.ofMillis(1_250));
        assertThatThrownBy(() -> of(Duration.ofSeconds(3), Duration.ofMillis(1_250).plusNanos(1)))
                .isInstanceOf(ConfigurationException.class);
    }

    /**
     * Every combination the start accepts, at its edges: the longest renewal interval, the shortest ttl, keepalives far
     * shorter and far longer than the ttl. The leases and the membership of either engine are each renewed twice before
     * their holder counts them lost, and a lapse found by the clock comes before the membership can end on the server.
     */
    @Test
    void everyAcceptedCombinationRenewsLeasesAndMembershipsTwiceBeforeTheyLapse() {
        long[] ttls = { 500, 501, 999, 1_000, 2_500, 2_501, 3_000, 10_000, 30_000, 120_000 };
        long[] keepalives = { 1, 100, 500, 1_000, 5_000, 60_000 };
        for (long ttlMillis : ttls) {
            Duration ttl = Duration.ofMillis(ttlMillis);
            Duration longest = ttl.dividedBy(2).minusNanos(LockTimings.lossMargin(ttl.toNanos()));
            for (Duration renew : new Duration[] { null, Duration.ofMillis(1), longest.minusMillis(1), longest }) {
                for (long keepaliveMillis : keepalives) {
                    LockTimings timings = LockTimings.of(Duration.ofMillis(keepaliveMillis), ttl,
                            Optional.ofNullable(renew), Duration.ofSeconds(1), KEY);
                    String what = "ttl " + ttlMillis + " ms, renew " + timings.renewInterval().toNanos() + " ns, keepalive "
                            + keepaliveMillis + " ms";
                    long renewNanos = timings.renewIntervalNanos();
                    long margin = timings.lossMarginNanos();
                    assertThat(2 * (renewNanos + margin)).as(what).isLessThanOrEqualTo(timings.ttlNanos());
                    // LEASE: renewed every renewal interval, its lapse found by the expiry check
                    long leaseMargin = timings.membershipMarginNanos(LockMode.LEASE);
                    assertThat(timings.memberTtlNanos() - leaseMargin).as(what)
                            .isGreaterThanOrEqualTo(2 * renewNanos + margin);
                    assertThat(leaseMargin - timings.expiryCheckNanos()).as(what)
                            .isGreaterThanOrEqualTo(timings.membershipClockMargin().toNanos() + timings.expiryCheckNanos());
                    // NAMED: renewed every keepalive, its lapse checked twice per keepalive
                    long keepalive = timings.keepaliveNanos();
                    long namedMargin = timings.membershipMarginNanos(LockMode.NAMED);
                    assertThat(timings.memberTtlNanos() - namedMargin).as(what).isGreaterThanOrEqualTo(2 * keepalive);
                    assertThat(namedMargin).as(what).isGreaterThanOrEqualTo(2 * (keepalive / 2));
                }
            }
        }
    }
}
