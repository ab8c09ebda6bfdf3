package io.quarkiverse.mysqllock.runtime.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockNotAcquiredException;

/** The deadlines of the primitives' waits: checked, cut to a year, never past; a paused wait ends at an interrupt. */
class WaitsTest {

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    @Test
    void aWaitMustBeZeroOrPositive() {
        assertThatThrownBy(() -> Waits.deadline("semaphore jobs", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("The wait for semaphore jobs must be zero or positive, not null");
        assertThatThrownBy(() -> Waits.deadline("the read lock of catalog", Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("The wait for the read lock of catalog must be zero or positive, not PT-1S");
    }

    @Test
    void aZeroWaitEndsNow() {
        long deadline = Waits.deadline("semaphore jobs", Duration.ZERO);
        assertThat(Waits.left(deadline)).isEqualTo(Duration.ZERO);
    }

    @Test
    void whatIsLeftOfAWaitIsNeverNegative() {
        assertThat(Waits.left(System.nanoTime() - TimeUnit.SECONDS.toNanos(1))).isEqualTo(Duration.ZERO);
        Duration left = Waits.left(Waits.deadline("semaphore jobs", Duration.ofHours(1)));
        assertThat(left).isLessThanOrEqualTo(Duration.ofHours(1)).isGreaterThan(Duration.ofMinutes(59));
    }

    @Test
    void aWaitLongerThanAYearIsCutToAYearWithoutOverflow() {
        // Duration.toNanos() of this one would overflow
        Duration left = Waits.left(Waits.deadline("semaphore jobs", Duration.ofSeconds(Long.MAX_VALUE)));
        assertThat(left).isLessThanOrEqualTo(Duration.ofDays(365)).isGreaterThan(Duration.ofDays(364));
        assertThat(Waits.left(Waits.deadline("semaphore jobs", Duration.ofDays(400))))
                .isLessThanOrEqualTo(Duration.ofDays(365));
    }

    @Test
    void aPauseThatIsNotInterruptedReturns() {
        assertThatCode(() -> Waits.pause("jobs", System.nanoTime(), TimeUnit.MICROSECONDS.toNanos(1)))
                .doesNotThrowAnyException();
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @Test
    void anInterruptEndsThePausedWaitAsTheEnginesEndTheirsAndIsKept() {
        long start = System.nanoTime() - TimeUnit.SECONDS.toNanos(2);
        Thread.currentThread().interrupt();

        // an interrupted thread does not park: the pause ends at once
        assertThatThrownBy(() -> Waits.pause("jobs", start, TimeUnit.SECONDS.toNanos(30)))
                .isInstanceOfSatisfying(LockNotAcquiredException.class, e -> {
                    assertThat(e.lockName()).isEqualTo("jobs");
                    assertThat(e.reason()).isEqualTo(LockNotAcquiredException.Reason.INTERRUPTED);
                    assertThat(e.getCause()).isInstanceOf(InterruptedException.class);
                    assertThat(e.waited()).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
                    assertThat(e.holder()).isEmpty();
                })
                .hasMessage("Interrupted while waiting for jobs");
        assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept").isTrue();
    }
}
