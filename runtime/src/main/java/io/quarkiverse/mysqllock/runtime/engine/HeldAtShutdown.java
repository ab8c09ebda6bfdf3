package io.quarkiverse.mysqllock.runtime.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockInfo;

/**
 * The locks still held when the application shuts down: work in progress (a running {@code @Locked} method or job, a
 * {@code withLock} body) holds them, and may run on for a while, since Quarkus ends beans before its worker threads.
 * Released at once, such a lock could be taken by another instance while this one's work still runs: two runs of one
 * job at the same time. So the shutdown first waits, up to {@code quarkus.mysql-lock.shutdown-wait}, for their holders
 * to release them; what is still held then is released, its holders told ({@code SHUTDOWN}).
 */
public final class HeldAtShutdown {

    private static final Logger LOG = Logger.getLogger(HeldAtShutdown.class);
    /** How often the locks still held are looked at: a look is a walk of this instance's own holds, in memory. */
    private static final long LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** How long the shutdown waits ({@code shutdown-wait}); none until the config says. */
    private volatile Duration wait = Duration.ZERO;
    private final AtomicBoolean began = new AtomicBoolean();

    /** How long the shutdown waits for work in progress to release its locks ({@code shutdown-wait}). */
    public void waitUpTo(Duration wait) {
        this.wait = wait;
    }

    /**
     * Once, at the start of the shutdown: runs {@code first} (what ends at once, and what keeps new work from
     * starting), then waits until {@code shutdown-wait} after {@code sinceNanos} for the engine's locks to be released.
     * Later calls return at once.
     */
    public void await(long sinceNanos, Runnable first, LockEngine engine) {
        if (began.compareAndSet(false, true)) {
            first.run();
            long left = wait.toNanos() - (System.nanoTime() - sinceNanos);
            awaitReleased(engine, Duration.ofNanos(Math.max(0, left)));
        }
    }

    /**
     * Waits until the engine holds no lock, or {@code wait} has passed, or the thread is interrupted.
     *
     * @return the locks still held then
     */
    private static List<LockInfo> awaitReleased(LockEngine engine, Duration wait) {
        List<LockInfo> held = engine.held();
        if (held.isEmpty() || wait.isZero()) {
            return held;
        }
        LOG.infof("Shutting down: waiting up to %d ms (quarkus.mysql-lock.shutdown-wait) for %d lock(s) still held by"
                + " work in progress to be released: %s", wait.toMillis(), held.size(), names(held));
        long deadline = System.nanoTime() + wait.toNanos();
        while (!held.isEmpty() && deadline - System.nanoTime() > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(Math.min(LOOK_NANOS, deadline - System.nanoTime()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            held = engine.held();
        }
        if (!held.isEmpty()) {
            LOG.warnf("Shutting down: %d lock(s) still held after %d ms (quarkus.mysql-lock.shutdown-wait) are released"
                    + " now, their holders told (SHUTDOWN); another instance may take them while this one's work still"
                    + " runs: %s", held.size(), wait.toMillis(), names(held));
        }
        return held;
    }

    private static List<String> names(List<LockInfo> held) {
        return held.stream().map(LockInfo::name).limit(20).toList();
    }
}
