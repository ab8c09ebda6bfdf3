package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * After 10,000 acquire/release cycles the server holds none of the locks, and once the shared connections idled out
 * no connection is pinned or borrowed.
 */
class NoLeakTest {

    static final int CYCLES = 10_000;
    static final int THREADS = 4;
    static final int NAMES = 25;

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideConfigKey("quarkus.datasource.jdbc.metrics.enabled", "true");

    @Inject
    LockManager locks;

    @Inject
    MySqlLockManager manager;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void tenThousandCyclesLeaveNothingBehind() throws Exception {
        AtomicInteger acquired = new AtomicInteger();
        AtomicInteger busy = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            runs.add(Background.run(() -> {
                for (int i = 0; i < CYCLES / THREADS; i++) {
                    String name = "leak:" + ((i * THREADS + thread) % NAMES);
                    if (i % 3 == 0) {
                        try (LockHandle outer = locks.acquire(name, Duration.ofSeconds(5));
                                LockHandle nested = locks.acquire(name, Duration.ZERO)) {
                            acquired.incrementAndGet();
                        }
                    } else {
                        Optional<LockHandle> handle = locks.tryAcquire(name);
                        if (handle.isPresent()) {
                            acquired.incrementAndGet();
                            handle.get().release();
                        } else {
                            busy.incrementAndGet();
                        }
                    }
                }
            }, threads));
        }
        CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get();
        threads.shutdown();

        assertThat(acquired.get() + busy.get()).isEqualTo(CYCLES);
        assertThat(acquired.get()).isGreaterThan(CYCLES / 2);
        // Every lock is released on the server at once; the shared connections stay pinned a moment for the next
        // lock, then go back to the pool.
        for (int i = 0; i < NAMES; i++) {
            assertThat(ServerState.holder("leak:" + i)).as("leak:" + i).isEmpty();
        }
        assertThat(manager.held()).isEmpty();
        LockApp.await("the idle shared connections to go back to the pool", Duration.ofSeconds(30),
                () -> ((NamedLockEngine) manager.engine()).pinnedConnections() == 0);
        // Only the connection kept for the engine's housekeeping (its membership of the fleet) stays lent. A session is
        // unpinned before its settings are restored and it is given back (a round trip): wait for the pool to see it.
        LockApp.await("every connection but the housekeeping one to be back in the pool", Duration.ofSeconds(30),
                () -> dataSource.getMetrics().activeCount() == 1);
        assertThat(dataSource.getMetrics().activeCount()).isOne();
    }
}
