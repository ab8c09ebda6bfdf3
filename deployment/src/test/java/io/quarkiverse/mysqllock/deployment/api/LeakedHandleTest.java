package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A handle garbage-collected while held (its holder forgot {@code release()}) is logged with the code that took it,
 * and released: a leak costs a warning and a delay, never a lock held until the application stops.
 */
class LeakedHandleTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Events.class)
            .setLogRecordPredicate(record -> record.getLoggerName().endsWith("HoldLeaks"))
            .assertLogRecords(records -> {
                for (String name : new String[] { "leak:named", "leak:lease" }) {
                    assertThat(records).anySatisfy(record -> assertThat(String.format(record.getMessage(),
                            record.getParameters())).contains("Lock '" + name + "' was never released")
                            .contains(LeakedHandleTest.class.getName() + ".takeAndForget(LeakedHandleTest.java:"));
                }
            });

    @Inject
    LockManager locks;

    @Test
    void aForgottenNamedHandleIsReleasedWhenCollected() {
        takeAndForget(locks, "leak:named");
        awaitFreed(locks, "leak:named");
    }

    @Test
    void aForgottenLeaseHandleIsReleasedWhenCollected() {
        try (StandaloneLocks instance = StandaloneLocks.Settings.of("leak-lease").mode(Mode.LEASE).table("leak_lock")
                .start()) {
            takeAndForget(instance.locks, "leak:lease");
            awaitFreed(instance.locks, "leak:lease");
        }
    }

    @Test
    void aReleasedHandleIsNotReleasedAgain() {
        locks.acquire("leak:released").release();
        try (var again = locks.acquire("leak:released")) {
            for (int i = 0; i < 3; i++) {
                System.gc();
            }
            assertThat(again.isValid()).isTrue();
        }
    }

    /** Lock events on: their listener of each hold must not keep a dropped handle reachable. */
    @jakarta.enterprise.context.ApplicationScoped
    public static class Events {
        final java.util.List<io.quarkiverse.mysqllock.LockEvent> seen = new java.util.concurrent.CopyOnWriteArrayList<>();

        void observe(@jakarta.enterprise.event.Observes io.quarkiverse.mysqllock.LockEvent event) {
            seen.add(event);
        }
    }

    /** Takes the lock and drops its handle: nothing refers to it once this returns. */
    private static void takeAndForget(LockManager manager, String name) {
        manager.acquire(name);
    }

    private static void awaitFreed(LockManager manager, String name) {
        LockApp.await("the forgotten hold of '" + name + "' to be released", Duration.ofSeconds(60), () -> {
            System.gc();
            return LockApp.freeFor(manager, name);
        });
    }
}
