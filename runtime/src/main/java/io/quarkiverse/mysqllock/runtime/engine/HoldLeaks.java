package io.quarkiverse.mysqllock.runtime.engine;

import java.lang.ref.Cleaner;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;

/**
 * Finds holds whose handle was garbage-collected while held, never released by its holder (a forgotten
 * {@code release()}, a handle dropped on an exception path): each is logged with the thread and the code that took
 * it, and released, so that a leak costs a warning and a delay, never a lock held until the application stops.
 * <p>
 * The code that took a hold is a few frames of its stack, read when the hold is made ({@link StackWalker}, a
 * microsecond or two beside the round trip of an acquisition).
 */
public final class HoldLeaks {

    private static final Logger LOG = Logger.getLogger(HoldLeaks.class);
    private static final Cleaner CLEANER = Cleaner.create(ConnectionSource.daemonThreads("mysql-lock-leaks-"));
    /** Releases on threads of their own: a release may wait for its session, and the cleaner serves every hold. */
    private static final ExecutorService RELEASES = Executors
            .newCachedThreadPool(ConnectionSource.daemonThreads("mysql-lock-leaked-release-"));
    private static final int SITE_FRAMES = 4;
    private static final List<String> INTERNAL = List.of("io.quarkiverse.mysqllock.runtime.", "java.", "jdk.", "sun.",
            "io.quarkus.arc.", "io.smallrye.mutiny.", "io.quarkiverse.mysqllock.shedlock.");

    private HoldLeaks() {
    }

    /** Where a hold is being made: the first frames of the calling code outside the extension, the JDK and ArC. */
    static String site() {
        return StackWalker.getInstance().walk(frames -> frames
                .filter(frame -> INTERNAL.stream().noneMatch(frame.getClassName()::startsWith))
                .limit(SITE_FRAMES)
                .map(frame -> frame.getClassName() + "." + frame.getMethodName() + "(" + frame.getFileName() + ":"
                        + frame.getLineNumber() + ")")
                .collect(Collectors.joining(" < ")));
    }

    /**
     * Watches a handle: if it becomes unreachable while {@code leaked} still finds the hold held, that hold is logged
     * and released. {@code leaked} must not refer to the handle, or the handle would never become unreachable.
     *
     */
    static Cleaner.Cleanable watch(Object handle, String lockName, String takenBy, String site, Leaked leaked) {
        return CLEANER.register(handle, () -> {
            if (leaked.released()) {
                return; // the usual case: cleaned by its release, on the releasing thread
            }
            Runnable release = () -> {
                if (leaked.releaseIfHeld()) {
                    LOG.warnf("Lock '%s' was never released: its handle, taken by thread '%s' at %s, was"
                            + " garbage-collected while held. It is released now; until then nobody else could take it."
                            + " Release every handle (try-with-resources), or use withLock", lockName, takenBy,
                            site.isEmpty() ? "(unknown)" : site);
                }
            };
            try {
                RELEASES.execute(release);
            } catch (RejectedExecutionException e) {
                release.run();
            }
        });
    }

    /** The state of a hold, which must not refer to its handle. */
    interface Leaked {
        /** Whether the hold was released (or abandoned) already. */
        boolean released();

        /** Releases the hold if it is still held; answers whether it was. */
        boolean releaseIfHeld();
    }
}
