package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

class RunOnceTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void theFirstCallRunsAndRecordsItLaterCallsDoNotRun() {
        AtomicInteger runs = new AtomicInteger();
        assertThat(locks.runOnce("once:seed", runs::incrementAndGet)).isTrue();
        assertThat(locks.runOnce("once:seed", runs::incrementAndGet)).isFalse();
        assertThat(runs.get()).isEqualTo(1);
        assertThat(ServerState.queryLong("SELECT completed_at IS NOT NULL FROM mysql_lock WHERE name = 'once:seed'"))
                .isEqualTo(1);
    }

    @Test
    void aFailedRunIsNotRecordedAndRunsAgain() {
        assertThatThrownBy(() -> locks.runOnce("once:flaky", () -> {
            throw new IllegalStateException("first attempt fails");
        })).hasMessage("first attempt fails");
        AtomicInteger runs = new AtomicInteger();
        assertThat(locks.runOnce("once:flaky", runs::incrementAndGet)).isTrue();
        assertThat(runs.get()).isEqualTo(1);
    }

    @Test
    void concurrentCallersWaitForTheRunningOneAndDoNotRun() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Boolean> first = Background.supply(() -> locks.runOnce("once:busy", () -> {
            runs.incrementAndGet();
            started.countDown();
            await(finish);
        }));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        List<CompletableFuture<Boolean>> others = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            others.add(Background.supply(() -> locks.runOnce("once:busy", runs::incrementAndGet)));
        }
        // one of them waits on the server, the others in the JVM for their turn to
        LockApp.await("the others to wait", java.time.Duration.ofSeconds(30), () -> ServerState.waitingInGetLock() >= 1);
        assertThat(others).noneMatch(CompletableFuture::isDone);
        finish.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS)).isTrue();
        for (CompletableFuture<Boolean> other : others) {
            assertThat(other.get(10, TimeUnit.SECONDS)).isFalse();
        }
        assertThat(runs.get()).isEqualTo(1);
    }

    /** A hold of the test's own, ended when the test says: one it never ends fails loudly, never ends by itself. */
    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never let the run finish");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
