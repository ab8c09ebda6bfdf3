package io.quarkiverse.mysqllock.deployment.named;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.named.NamedLockEngine;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A shared connection that holds nothing goes back to the pool a moment after its last lock, whichever piece of the
 * keepalive's periodic work claims it first. A fault run's worker (keepalive 500 ms, the give-back's own period) kept
 * one pinned for good: after a pause, the session check ran microseconds before every give-back, claimed the session
 * for a check that found nothing to check, and the give-back skipped it, every period.
 * <p>
 * That interleaving depends on the phase of two periodic tasks, so this test makes it happen: it reaches into the
 * keepalive (by reflection: the names {@code keepalive}, {@code checks}, {@code checkSessions} and
 * {@code tendIdleSessions} are the engine's) to run the session check and then the give-back back to back, with the
 * check's work held until both have looked.
 */
class IdleSharedGiveBackTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    /** Holds the work handed to it until {@link #runAll()}, then runs it on the caller's thread. */
    static final class HeldWork extends AbstractExecutorService {
        final ConcurrentLinkedQueue<Runnable> work = new ConcurrentLinkedQueue<>();

        @Override
        public void execute(Runnable command) {
            work.add(command);
        }

        int runAll() {
            int ran = 0;
            for (Runnable next; (next = work.poll()) != null; ran++) {
                next.run();
            }
            return ran;
        }

        @Override
        public void shutdown() {
        }

        @Override
        public List<Runnable> shutdownNow() {
            return new ArrayList<>(work);
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }
    }

    @Test
    void anIdleSharedConnectionGoesBackWhenTheSessionCheckClaimedItFirst() throws Exception {
        // a keepalive of an hour: the test alone runs the session check
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("idle-give-back").mode(Mode.NAMED)
                .keepalive(Duration.ofHours(1)).start()) {
            NamedLockEngine engine = (NamedLockEngine) instance.locks.engine();
            instance.locks.acquire("idle:claimed", Duration.ZERO).release();
            assertThat(engine.pinnedConnections()).as("the shared connection lingers for the next lock").isEqualTo(1);

            Object keepalive = field(engine, "keepalive");
            HeldWork held = new HeldWork();
            Field checks = keepalive.getClass().getDeclaredField("checks");
            checks.setAccessible(true);
            checks.set(keepalive, held);

            invoke(keepalive, "checkSessions"); // claims the session; its work waits
            LockSupport.parkNanos(Duration.ofMillis(1200).toNanos()); // the session is idle longer than its linger now
            invoke(keepalive, "tendIdleSessions"); // finds it claimed
            assertThat(held.runAll()).as("the work the claims handed over").isPositive();

            assertThat(engine.pinnedConnections()).as("pinned after the claimed work ran: " + engine.describePinned())
                    .isZero();
        }
    }

    private static Object field(Object owner, String name) throws ReflectiveOperationException {
        Field field = owner.getClass().getDeclaredField(name);
        field.setAccessible(true);
        return field.get(owner);
    }

    private static void invoke(Object owner, String method) throws ReflectiveOperationException {
        Method m = owner.getClass().getDeclaredMethod(method);
        m.setAccessible(true);
        m.invoke(owner);
    }
}
