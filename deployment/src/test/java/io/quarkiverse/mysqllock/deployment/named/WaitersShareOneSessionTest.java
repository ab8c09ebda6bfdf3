package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.engine.LocalGate;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Many threads of one instance waiting for one name use one server session between them, not one each: the others
 * wait in the JVM, in the order they came, for the right to wait on the server. Before, 50 waiters asked the pool (20
 * connections) for 50 sessions, and those that got none failed.
 */
class WaitersShareOneSessionTest {

    static final int WAITERS = 50;

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Test
    void fiftyWaitersWaitOnOneSessionAndAllGetTheLockInTurn() throws Exception {
        try (StandaloneLocks holder = StandaloneLocks.Settings.of("hot-holder").mode(Mode.NAMED).start();
                StandaloneLocks waiters = StandaloneLocks.Settings.of("hot-waiters").mode(Mode.NAMED).start()) {
            NamedLockEngine engine = (NamedLockEngine) waiters.locks.engine();
            LockHandle held = holder.locks.acquire("hot", Duration.ZERO);
            AtomicInteger granted = new AtomicInteger();
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            List<Thread> waiterThreads = new CopyOnWriteArrayList<>();
            Executor ownThread = work -> {
                Thread thread = new Thread(work, "hot-waiter");
                thread.setDaemon(true);
                waiterThreads.add(thread);
                thread.start();
            };
            for (int i = 0; i < WAITERS; i++) {
                threads.add(Background.run(() -> {
                    try (LockHandle handle = waiters.locks.acquire("hot", Duration.ofSeconds(60))) {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        granted.incrementAndGet();
                        inside.decrementAndGet();
                    }
                }, ownThread));
            }
            LockApp.await("a waiter to wait on the server", Duration.ofSeconds(10),
                    () -> ServerState.waitingInGetLock() >= 1);
            // every waiter has asked: one waits on the server, the others in the JVM, at the name's gate
            LockApp.await("the other waiters to wait at the name's gate in the JVM", Duration.ofSeconds(30),
                    () -> waiterThreads.stream().filter(WaitersShareOneSessionTest::waitsAtTheGate).count() == WAITERS - 1);
            assertThat(ServerState.waitingInGetLock()).as("sessions waiting on the server").isOne();
            // the shared connections their first, immediate tries used go back a moment later: one is left
            LockApp.await("the waiters to keep one connection, " + engine.describePinned(), Duration.ofSeconds(30),
                    () -> engine.pinnedConnections() == 1);
            assertThat(ServerState.waitingInGetLock()).as("sessions waiting on the server").isOne();
            assertThat(granted.get()).isZero();

            held.release();
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertThat(granted.get()).isEqualTo(WAITERS);
            assertThat(overlaps.get()).isZero();
        }
    }

    private static boolean waitsAtTheGate(Thread thread) {
        return Arrays.stream(thread.getStackTrace()).anyMatch(
                frame -> frame.getClassName().equals(LocalGate.class.getName()) && frame.getMethodName().equals("pass"));
    }
}
