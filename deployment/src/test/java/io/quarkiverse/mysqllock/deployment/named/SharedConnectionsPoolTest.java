package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A pool with one connection for the locks (the other is kept for the housekeeping): the first shared connection takes it, and
 * threads that find it inside a statement take
 * turns on it instead of failing, or waiting for the pool (connection-wait 30 s), for a connection it does not have.
 * A fixed number of acquisitions, and a bound far below the connection-wait: a busy machine slows them all, but never
 * to a wait for the pool.
 */
class SharedConnectionsPoolTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideConfigKey("quarkus.datasource.jdbc.max-size", "2")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.mode", "named")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.connection-wait", "30s");

    @Inject
    LockManager locks;

    @Inject
    MySqlLockManager manager;

    @Test
    void threadsTakeTurnsOnTheSharedConnectionWhenThePoolHasNoOtherToSpare() throws Exception {
        AtomicInteger acquired = new AtomicInteger();
        AtomicLong slowestMillis = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        // started together, so that they find the shared connection inside each other's statements
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<Void>> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int thread = t;
            threads.add(Background.run(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    failure.compareAndSet(null, e);
                    return;
                }
                for (int i = 0; i < 50; i++) {
                    long start = System.nanoTime();
                    try {
                        Optional<LockHandle> handle = locks.tryAcquire("pool-shared:" + thread + ":" + i);
                        slowestMillis.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                                Math::max);
                        assertThat(handle).isPresent();
                        acquired.incrementAndGet();
                        handle.get().release();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        return;
                    }
                }
            }));
        }
        go.countDown();
        CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        assertThat(failure.get()).isNull();
        assertThat(acquired.get()).isEqualTo(400);
        assertThat(slowestMillis.get()).as("the slowest acquisition, in ms: a turn, not a wait for the pool")
                .isLessThan(5_000);
        assertThat(((NamedLockEngine) manager.engine()).pinnedConnections()).isLessThanOrEqualTo(1);
    }
}
