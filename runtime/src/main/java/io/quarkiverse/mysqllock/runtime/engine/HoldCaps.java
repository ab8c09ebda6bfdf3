package io.quarkiverse.mysqllock.runtime.engine;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;

/**
 * Ends holds at their {@code atMostFor} cap, for the engines whose locks have no lease of their own to expire (NAMED,
 * in-memory): a hung but live holder never keeps a lock for ever. One timer thread; the end itself runs on the
 * engine's executor, so that an end waiting for a busy session delays no other.
 */
public final class HoldCaps<L extends GrantedLock> implements AutoCloseable {

    private final ScheduledThreadPoolExecutor timer;
    private final Executor work;
    private final Consumer<L> end;

    /**
     * @param end ends a lock that reached its cap: told lost ({@code LEASE_EXPIRED}) and freed for the next holder;
     *        it must do nothing to a lock released or lost meanwhile
     */
    public HoldCaps(String threadPrefix, Executor work, Consumer<L> end) {
        this.timer = new ScheduledThreadPoolExecutor(1, ConnectionSource.daemonThreads(threadPrefix));
        this.timer.setRemoveOnCancelPolicy(true); // a released or extended hold's cap goes at once, not at its time
        this.work = work;
        this.end = end;
    }

    /** Ends the lock {@code nanos} from now, instead of at its former cap if it had one. */
    public void capAt(L lock, long nanos) {
        synchronized (lock) {
            lock.cancelCap();
            if (lock.isHeld()) {
                int generation = ++lock.capGeneration;
                lock.cap = timer.schedule(() -> endLater(lock, generation), nanos, TimeUnit.NANOSECONDS);
            }
        }
    }

    /** Ends the lock, unless an extension gave it another cap since this one was set (its timer had already fired). */
    private void endLater(L lock, int generation) {
        Runnable ending = () -> {
            synchronized (lock) {
                if (lock.capGeneration != generation) {
                    return;
                }
            }
            end.accept(lock);
        };
        try {
            work.execute(ending);
        } catch (RejectedExecutionException e) {
            ending.run(); // shutting down: ended here rather than never
        }
    }

    /** The message of a lock ended at its cap. */
    public static String message(GrantedLock lock, String how) {
        return "Lock '" + lock.name + "' reached its atMostFor cap while it was held: " + how;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
