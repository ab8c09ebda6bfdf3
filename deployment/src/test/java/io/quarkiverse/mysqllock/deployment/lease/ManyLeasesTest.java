package io.quarkiverse.mysqllock.deployment.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Many threads taking many new leases at once, on a small pool (20 connections): a lease needs a connection only per
 * statement, and concurrent first uses of new names (seeding rows next to each other) neither deadlock nor starve: a
 * thread that waited out its 30 s for a free name would fail. How fast they go is the benchmarks' to say, not a test's.
 */
class ManyLeasesTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void hundredThreadsTakeAThousandNewLeasesOnTwentyConnections() throws Exception {
        try (StandaloneLocks standalone = StandaloneLocks.Settings.of("many").mode(MySqlLockRuntimeConfig.Mode.LEASE)
                .table("many_lease_lock").start()) {
            int threads = 100;
            int each = 10;
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<LockHandle> handles = new ConcurrentLinkedQueue<>();
            CountDownLatch done = new CountDownLatch(threads);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                Thread worker = new Thread(() -> {
                    try {
                        for (int i = 0; i < each; i++) {
                            handles.add(standalone.locks.acquire("many-leases:" + thread + ":" + i, Duration.ofSeconds(30)));
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    } finally {
                        done.countDown();
                    }
                });
                workers.add(worker);
                worker.start();
            }
            assertThat(done.await(120, TimeUnit.SECONDS)).as("all threads done").isTrue();
            assertThat(failures).isEmpty();
            assertThat(handles).hasSize(threads * each);
            assertThat(handles).allMatch(LockHandle::isValid);
            handles.forEach(LockHandle::release);
        }
    }
}
