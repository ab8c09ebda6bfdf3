package io.quarkiverse.mysqllock.deployment.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.engine.PeriodicWork;

/**
 * The engines' periodic work (keepalive, renewals, expiry checks) survives a run that throws: a JDK periodic task that
 * throws is never run again, which would leave every later loss unreported.
 */
class PeriodicWorkTest {

    @Test
    void aRunThatThrowsIsFollowedByTheNext() throws Exception {
        PeriodicWork work = new PeriodicWork("periodic-work-test-", 1);
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch thirdRun = new CountDownLatch(1);
        try {
            work.every(0, TimeUnit.MILLISECONDS.toNanos(10), "test work", () -> {
                int run = runs.incrementAndGet();
                if (run == 1) {
                    throw new IllegalStateException("the first run fails");
                }
                if (run == 2) {
                    throw new AssertionError("an Error, too");
                }
                thirdRun.countDown();
            });
            assertThat(thirdRun.await(10, TimeUnit.SECONDS)).as("a third run after two that threw").isTrue();
        } finally {
            work.shutdownNow();
        }
        assertThat(runs.get()).isGreaterThanOrEqualTo(3);
    }
}
