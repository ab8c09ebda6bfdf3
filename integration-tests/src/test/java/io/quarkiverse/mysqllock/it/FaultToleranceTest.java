package io.quarkiverse.mysqllock.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException;
import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.test.Await;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.testing.EmbeddedMariaDb;
import io.quarkiverse.mysqllock.testing.LockFaults;
import io.quarkus.test.junit.QuarkusTest;

@QuarkusTest
@EmbeddedMariaDb
class FaultToleranceTest {

    @Inject
    ResilientOrders orders;

    @Inject
    LockManager locks;

    @Inject
    LockFaults faults;

    @Test
    void retryRetriesTheAcquisitionUntilTheLockIsFree() throws Exception {
        LockFaults.Busy holder = faults.makeBusy("resilient:r1");
        CompletableFuture<String> call = Background.supply(() -> orders.retried("r1"));
        Thread.sleep(300); // a few attempts fail while the lock is held: that is the behaviour under test
        assertThat(call).isNotDone();
        holder.close();
        assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("shipped r1");
    }

    @Test
    void fallbackAnswersWhenTheLockIsBusy() throws Exception {
        int runs = orders.runs();
        try (LockFaults.Busy holder = faults.makeBusy("resilient:f1")) {
            assertThat(Background.supply(() -> orders.withFallback("f1")).get(10, TimeUnit.SECONDS))
                    .isEqualTo("busy, try f1 later");
        }
        assertThat(orders.runs()).isEqualTo(runs);
        assertThat(Background.supply(() -> orders.withFallback("f1")).get(10, TimeUnit.SECONDS))
                .isEqualTo("shipped f1");
    }

    @Test
    void aWaitShorterThanTheTimeoutEndsFirstAndNothingRunsLater() throws Exception {
        int runs = orders.runs();
        try (LockFaults.Busy holder = faults.makeBusy("resilient:t1")) {
            CompletableFuture<String> call = orders.waitShorterThanTimeout("t1").subscribeAsCompletionStage();
            ExecutionException failure = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> call.get(10, TimeUnit.SECONDS));
            assertThat(failure.getCause()).isInstanceOf(LockNotAcquiredException.class);
        }
        assertThat(orders.runs()).as("the method did not run").isEqualTo(runs);
        assertThat(locks.isLocked("resilient:t1")).isFalse();
    }

    @Test
    void aTimedOutBodyStillReleasesItsLockWhenItEnds() throws Exception {
        CompletableFuture<String> call = orders.slowBody("t2").subscribeAsCompletionStage();
        ExecutionException failure = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> call.get(10, TimeUnit.SECONDS));
        assertThat(failure.getCause()).isInstanceOf(TimeoutException.class);
        Await.until("the lock to be released when the body ends", Duration.ofSeconds(10),
                () -> !locks.isLocked("resilient:t2"));
    }
}
