package io.quarkiverse.mysqllock.deployment.testing;

import java.time.Duration;
import java.util.Map;

import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.test.QuarkusUnitTest;

/** A test application whose default datasource is the test server. */
public final class LockApp {

    private LockApp() {
    }

    public static QuarkusUnitTest app(Class<?>... classes) {
        QuarkusUnitTest test = new QuarkusUnitTest()
                .withApplicationRoot(
                        jar -> jar.addClasses(classes).addClasses(LockApp.class, ServerState.class, StandaloneLocks.class,
                                OneWorker.class))
                .overrideConfigKey("quarkus.datasource.db-kind", "mysql")
                .overrideConfigKey("quarkus.log.category.\"ch.vorburger\".level", "WARN");
        for (Map.Entry<String, String> entry : TestDatabase.shared().quarkusConfig().entrySet()) {
            test.overrideConfigKey(entry.getKey(), entry.getValue());
        }
        return test;
    }

    /** Whether another thread gets the lock at once (released again if it does). */
    public static boolean otherThreadAcquires(io.quarkiverse.mysqllock.LockManager locks, String name) throws Exception {
        java.util.Optional<io.quarkiverse.mysqllock.LockHandle> handle = io.quarkiverse.mysqllock.test.Background
                .supply(() -> locks.tryAcquire(name)).get();
        handle.ifPresent(io.quarkiverse.mysqllock.LockHandle::release);
        return handle.isPresent();
    }

    /** {@link #otherThreadAcquires}, for conditions: a failure to ask is thrown unchecked. */
    public static boolean freeFor(io.quarkiverse.mysqllock.LockManager locks, String name) {
        try {
            return otherThreadAcquires(locks, name);
        } catch (Exception e) {
            throw new IllegalStateException("Could not ask whether lock '" + name + "' is free", e);
        }
    }

    /** Polls until the condition holds, failing after the deadline. */
    public static void await(String what, Duration deadline, java.util.function.BooleanSupplier condition) {
        io.quarkiverse.mysqllock.test.Await.until(what, deadline, condition);
    }
}
