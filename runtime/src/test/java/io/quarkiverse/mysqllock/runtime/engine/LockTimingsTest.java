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
        assertThat(millis(timings.membershipMarginNanos(LockMode.LEASE))).isEqualTo(10_200);
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
                .hasMessageContaining("renew-interval=2800ms leaves no time to renew a lease");
        assertThatThrownBy(() -> of(Duration.ofSeconds(3), Duration.ZERO)).isInstanceOf(ConfigurationException.class)
                .hasMessage("quarkus.mysql-lock.lease.renew-interval=PT0S must be positive");
        assertThatThrownBy(() -> LockTimings.of(Duration.ZERO, Duration.ofSeconds(3), Optional.empty(), Duration.ZERO,
                relative -> "quarkus.mysql-lock.\"orders\"." + relative)).isInstanceOf(ConfigurationException.class)
                .hasMessage("quarkus.mysql-lock.\"orders\".named.keepalive-interval=PT0S must be positive");
        assertThatThrownBy(() -> LockTimings.of(KEEPALIVE, Duration.ofSeconds(3), Optional.empty(),
                Duration.ofMillis(-1), KEY)).isInstanceOf(ConfigurationException.class)
                .hasMessage("quarkus.mysql-lock.lease.max-clock-skew=PT-0.001S must not be negative");
    }
}
