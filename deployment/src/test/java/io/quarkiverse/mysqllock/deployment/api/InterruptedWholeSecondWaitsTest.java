package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.locks.Lock;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.deployment.testing.Waiter;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkus.test.QuarkusUnitTest;

/**
 * MySQL semantics (whole-second {@code GET_LOCK} waits, the rest polled every 20 ms), forced on MariaDB as in
 * {@code WholeSecondWaitTest}: an interrupt ends the whole-second wait on the server, and the polling, within
 * {@link #PROMPT}, with reason {@code INTERRUPTED}. Before, the whole-second wait ran to its end, and the polling
 * answered {@code BUSY}.
 */
class InterruptedWholeSecondWaitsTest {

    static final Duration PROMPT = Duration.ofSeconds(2);

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideRuntimeConfigKey("quarkus.mysql-lock.server-flavor", "mysql");

    @Inject
    LockManager locks;

    @Test
    void lockInterruptiblyEndsInsideAWholeSecondWait() throws Exception {
        String name = "whole-interrupt-view";
        try (StandaloneLocks other = new StandaloneLocks("whole-interrupt-holder", Mode.NAMED);
                LockHandle held = other.locks.acquire(name, Duration.ZERO)) {
            Lock lock = locks.asLock(name);
            Waiter<Object> call = new Waiter<>(() -> {
                lock.lockInterruptibly();
                lock.unlock();
                return null;
            });
            String serverName = other.locks.serverName(name);
            LockApp.await("the waiter inside a whole-second GET_LOCK", Duration.ofSeconds(10),
                    () -> waitingFor(serverName) > 0);
            assertThat(call.interruptAndTime()).isLessThan(PROMPT);
            assertThat(call.failure()).isInstanceOf(InterruptedException.class);
            LockApp.await("no session waiting on the server", PROMPT, () -> waitingFor(serverName) == 0);
            assertThat(held.isValid()).isTrue();
        }
    }

    /**
     * A wait under a second is only polled (GET_LOCK with no wait, every 20 ms): the interrupt ends the polling. The
     * 900 ms wait ends on its own clock: a try whose interrupt came after it (a busy machine) tells nothing, and is made
     * again on a name of its own.
     */
    @Test
    void anInterruptEndsThePolling() throws Exception {
        LockApp.conclusively("the interrupt landed inside the 900 ms wait", attempt -> {
            String name = "whole-interrupt-poll-" + attempt;
            try (StandaloneLocks other = new StandaloneLocks("whole-interrupt-poll-holder-" + attempt, Mode.NAMED);
                    LockHandle held = other.locks.acquire(name, Duration.ZERO)) {
                long start = System.nanoTime();
                Waiter<Object> call = new Waiter<>(() -> locks.acquire(name, Duration.ofMillis(900)));
                LockApp.await("the waiter sleeping between two polls", Duration.ofSeconds(30),
                        () -> call.thread.getState() == Thread.State.TIMED_WAITING || call.result.isDone());
                if (call.result.isDone()) {
                    return false; // its wait ran out before the test could interrupt it
                }
                Duration took = call.interruptAndTime();
                if (call.endedAt - took.toNanos() - start >= Duration.ofMillis(900).toNanos()) {
                    return false; // interrupted once its wait could have ended by itself
                }
                assertThat(took).isLessThan(Duration.ofMillis(500));
                assertThat(call.failure()).isInstanceOfSatisfying(LockNotAcquiredException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockNotAcquiredException.Reason.INTERRUPTED));
                assertThat(call.interruptKept).isTrue();
                assertThat(ServerState.holder(other.locks.serverName(name))).as("still the holder's").isPresent();
                return true;
            }
        });
    }

    static long waitingFor(String serverName) {
        return ServerState.queryLong("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?",
                "SELECT GET_LOCK('" + serverName + "'%");
    }
}
