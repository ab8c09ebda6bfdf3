package io.quarkiverse.mysqllock.testing;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

import io.quarkiverse.mysqllock.LockEvent;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkus.arc.Arc;
import io.quarkus.arc.ArcContainer;

/**
 * Assertions on locks for an application's own {@code @QuarkusTest}s, in the spirit of ShedLock's {@code LockAssert}:
 * that some code ran under a lock, and that no lock is left held. They fail with {@link AssertionError}, as JUnit's and
 * AssertJ's assertions do.
 *
 * <pre>
 * LockAssert.assertRunsUnderLock("report:nightly", () -&gt; reports.runNightly());
 * LockAssert.assertNoLockHeld();
 * </pre>
 */
public final class LockAssert {

    private LockAssert() {
    }

    /** Code that may throw, run by {@link #assertRunsUnderLock(String, ThrowingRunnable)}. */
    @FunctionalInterface
    public interface ThrowingRunnable {
        void run() throws Exception;
    }

    /**
     * Runs the action and asserts that, while it ran, the application took the lock of this name (on any thread: a
     * {@code @Locked} method of any mode, {@code withLock}, an asynchronous acquisition, a permit of the semaphore or a
     * side of the read-write lock of that name) and held it until the action returned or
     * released it before; fails if the action took no lock of that name. The action's own exception is rethrown.
     *
     * @return what the action returned
     */
    public static <T> T assertRunsUnderLock(String name, Callable<T> action) throws Exception {
        LockRecorder recorder = bean(LockRecorder.class);
        T result;
        List<LockEvent> events;
        try (LockRecorder.Recording recording = recorder.start()) {
            result = action.call();
            events = List.copyOf(recording.events);
        }
        // a read-write lock's sides and a semaphore's permits are locks of derived names ("name#rw-gate", ...)
        boolean taken = events.stream().anyMatch(event -> event.kind() == LockEvent.Kind.ACQUIRED
                && (event.name().equals(name) || event.name().startsWith(name + "#")));
        if (!taken) {
            throw new AssertionError("Expected the code to run under lock '" + name + "', but it took "
                    + (events.isEmpty() ? "no lock"
                            : "only " + events.stream().filter(event -> event.kind() == LockEvent.Kind.ACQUIRED)
                                    .map(event -> "'" + event.name() + "'").distinct().collect(Collectors.joining(", "))));
        }
        return result;
    }

    /** The same, for an action that returns nothing. */
    public static void assertRunsUnderLock(String name, ThrowingRunnable action) throws Exception {
        assertRunsUnderLock(name, () -> {
            action.run();
            return null;
        });
    }

    /** Asserts that the default datasource's lock manager holds no lock now. */
    public static void assertNoLockHeld() {
        assertNoLockHeld(bean(LockManager.class));
    }

    /**
     * Asserts that this lock manager holds no lock now (a lock kept by {@code atLeastFor} counts: it is held). Fails
     * with every lock held and its holder.
     */
    public static void assertNoLockHeld(LockManager locks) {
        List<LockInfo> held = locks.held();
        if (!held.isEmpty()) {
            throw new AssertionError("Expected no lock held, but " + held.size() + " are: " + held.stream()
                    .map(info -> "'" + info.name() + "' (held by " + info.holder() + " since " + info.since() + ")")
                    .collect(Collectors.joining(", ")));
        }
    }

    /** Asserts that this lock manager holds the lock of this name now. */
    public static void assertHeld(String name) {
        assertHeld(bean(LockManager.class), name);
    }

    /** Asserts that this lock manager holds the lock of this name now. */
    public static void assertHeld(LockManager locks, String name) {
        List<LockInfo> held = locks.held();
        if (held.stream().noneMatch(info -> info.name().equals(name))) {
            throw new AssertionError("Expected lock '" + name + "' to be held, but "
                    + (held.isEmpty() ? "no lock is"
                            : "only " + held.stream().map(info -> "'" + info.name() + "'")
                                    .collect(Collectors.joining(", ")) + (held.size() == 1 ? " is" : " are")));
        }
    }

    private static <T> T bean(Class<T> type) {
        ArcContainer container = Arc.container();
        if (container == null || !container.isRunning()) {
            throw new IllegalStateException("LockAssert needs the application under test running: use it in a"
                    + " @QuarkusTest");
        }
        T bean = container.instance(type).get();
        if (bean == null) {
            throw new IllegalStateException("No " + type.getSimpleName() + " bean: is quarkus-mysql-lock-test on the"
                    + " test classpath, and is the application running for tests?");
        }
        return bean;
    }
}
