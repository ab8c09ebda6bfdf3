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
                                OneWorker.class, Waiter.class))
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

    /** Milliseconds since {@code startNanos}, a {@link System#nanoTime()}. */
    public static long millisSince(long startNanos) {
        return java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /** One try of a check that only a window the product keeps can decide; its number names what it takes. */
    @FunctionalInterface
    public interface WindowedCheck {
        /** @return false when the check came too late to tell: the window may have closed before it was made */
        boolean conclusive(int attempt) throws Exception;
    }

    /**
     * A check that must land inside a window fixed by the product (an {@code atLeastFor} keep, an {@code atMostFor}
     * cap, a grace), which a busy machine can let pass before the check is made: each try measures whether it came in
     * time, and one that came too late to tell is made again on fresh names (its attempt number), up to three times.
     * A check that fails in time fails the test at once; three too late in a row abort it (the machine was too busy to
     * tell), rather than fail it, or make every window seconds long.
     */
    public static void conclusively(String what, WindowedCheck check) throws Exception {
        for (int attempt = 1; attempt <= 3; attempt++) {
            if (check.conclusive(attempt)) {
                return;
            }
        }
        org.junit.jupiter.api.Assumptions.abort(what + ": three tries in a row came too late to tell on this machine");
    }

    /** A time measured once per attempt, on names of the attempt's own. */
    @FunctionalInterface
    public interface Measurement {
        long millis(int attempt) throws Exception;
    }

    /**
     * The first of up to three measurements under {@code boundMillis}, else the shortest of the three: for an upper bound
     * on a time a busy machine can stretch (a thread not scheduled, a pause of the JVM). The defect such a bound is there
     * for (a wait in whole seconds, a missed wake-up, a check queued behind another) is slow every time; load is rarely so
     * three times in a row.
     */
    public static long bestOf3(long boundMillis, Measurement measurement) throws Exception {
        long best = Long.MAX_VALUE;
        for (int attempt = 1; attempt <= 3 && best >= boundMillis; attempt++) {
            best = Math.min(best, measurement.millis(attempt));
        }
        return best;
    }
}
