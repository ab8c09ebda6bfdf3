package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.engine.GrantedLock;
import io.quarkiverse.mysqllock.runtime.engine.GrantingEngine;
import io.quarkiverse.mysqllock.runtime.engine.HoldHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LossNotifier;

/**
 * The fault suite saw a holder never told of its loss: after SIGCONT the release, the watchdog and the expiry check
 * found the loss at the same moment, and each step of marking the lock lost was thread-safe but the whole was not.
 * Here threads report one loss at once, many times over: each listener must hear it exactly once.
 */
class LossNotifierRaceTest {

    static final class Held extends GrantedLock {
        Held() {
            super("race", "race", Instant.now());
        }
    }

    static final GrantingEngine<Held> ENGINE = new GrantingEngine<>() {
        @Override
        public void release(Held lock) {
        }

        @Override
        public void abandon(Held lock, String message) {
        }

        @Override
        public long fencingToken(Held lock) {
            return 1;
        }
    };

    @Test
    void concurrentReportsOfOneLossNotifyEachListenerOnce() throws Exception {
        LossNotifier notifier = new LossNotifier(LockMetrics.NONE, LockMode.LEASE);
        int rounds = 20_000;
        int reporters = 4;
        AtomicInteger notified = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(rounds);
        Held[] current = new Held[1];
        // each round: a new lock with a listener, then every reporter reports its loss at once
        CyclicBarrier start = new CyclicBarrier(reporters, () -> {
            Held lock = new Held();
            new HoldHandle<>(lock, ENGINE, null).onLost(e -> {
                notified.incrementAndGet();
                all.countDown();
            });
            current[0] = lock;
        });
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < reporters; r++) {
            boolean atRelease = r == 0;
            Thread thread = new Thread(() -> {
                try {
                    for (int round = 0; round < rounds; round++) {
                        start.await();
                        Held lock = current[0];
                        if (atRelease) {
                            notifier.loseAtRelease(lock, LockLostException.Reason.NOT_HELD, "found by the release", null);
                        } else {
                            notifier.lose(lock, LockLostException.Reason.LEASE_EXPIRED, "found by a check", null);
                        }
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            threads.add(thread);
            thread.start();
        }
        try {
            for (Thread thread : threads) {
                thread.join();
            }
            assertThat(all.await(60, TimeUnit.SECONDS)).as("every loss was reported to its listener (%d of %d)",
                    rounds - all.getCount(), rounds).isTrue();
            assertThat(notified.get()).as("and only once").isEqualTo(rounds);
        } finally {
            notifier.close();
        }
    }
}
