package io.quarkiverse.mysqllock.runtime.engine;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;

/**
 * Ends holds at their {@code atMostFor} cap, for the engines whose locks have no lease of their own to expire (NAMED,
 * in-memory): a hung but live holder never keeps a lock for ever. One timer thread; the end itself runs on the
 * engine's executor, so that an end waiting for a busy session delays no other.
 * <p>
 * An extension and the end at the cap are decided in one step, under the lock's monitor: either the extension comes
 * first, and the end finds its cap replaced and does nothing, or the end comes first ({@link GrantedLock#capEnding}),
 * and the extension is refused ({@link #extend} answers false) while the end tells the holders and frees the lock. An
 * extension that succeeded therefore means the lock is held until its new cap.
 */
public final class HoldCaps<L extends GrantedLock> implements AutoCloseable {

    private final ScheduledThreadPoolExecutor timer;
    private final Executor work;
    private final Consumer<L> end;

    /**
     * @param end ends a lock that reached its cap: told lost ({@code LEASE_EXPIRED}) and freed for the next holder. It
     *        runs only for a lock that was held when its end began, outside the lock's monitor; it must still do nothing
     *        to a lock released or lost another way meanwhile, and must free a lock that an extension refused by this
     *        end already marked lost ({@code LEASE_EXPIRED})
     */
    public HoldCaps(String threadPrefix, Executor work, Consumer<L> end) {
        this.timer = new ScheduledThreadPoolExecutor(1, ConnectionSource.daemonThreads(threadPrefix));
        this.timer.setRemoveOnCancelPolicy(true); // a released or extended hold's cap goes at once, not at its time
        this.work = work;
        this.end = end;
    }

    /**
     * Ends the lock {@code nanos} from now, instead of at its former cap if it had one.
     *
     * @return false, setting no cap, if the lock is no longer held or the end at its former cap has begun
     */
    public boolean capAt(L lock, long nanos) {
        synchronized (lock) {
            lock.cancelCap();
            if (!lock.isHeld() || lock.capEnding) {
                return false;
            }
            int generation = ++lock.capGeneration;
            lock.cap = timer.schedule(() -> endLater(lock, generation), nanos, TimeUnit.NANOSECONDS);
            return true;
        }
    }

    /**
     * An extension: moves a held lock's cap to {@code nanos} from now, in one step with the end at its cap. A lock
     * without a cap keeps none.
     *
     * @return true if the lock is held and, if it had a cap, now ends at the new one; false if it is no longer held, or
     *         the end at its cap has begun (it is lost, or about to be told so): nothing was moved
     */
    public boolean extend(L lock, long nanos) {
        synchronized (lock) {
            if (!lock.isHeld() || lock.capEnding) {
                return false;
            }
            return lock.cap == null || capAt(lock, nanos);
        }
    }

    /** Ends the lock, unless an extension gave it another cap since this one was set (its timer had already fired). */
    private void endLater(L lock, int generation) {
        Runnable ending = () -> {
            synchronized (lock) {
                if (lock.capGeneration != generation || !lock.isHeld()) {
                    return; // moved or cancelled (an extension, a release) since it fired, or ended another way
                }
                // Decided, in the step an extension takes too: no extension succeeds from now on.
                lock.capEnding = true;
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

    /**
     * What an extension that {@link #extend} refused throws: the lock's loss (an engine marks a lock whose end at the cap
     * has begun lost first, with the reason and message of that end), or, for a lock no longer held for another reason,
     * that it was released.
     */
    public static RuntimeException notExtended(GrantedLock lock) {
        LockLostException lost = lock.lost;
        if (lost == null) {
            return new IllegalStateException("Lock '" + lock.name + "' was released: it cannot be extended");
        }
        return new LockLostException(lock.name, lost.reason(), "Lock '" + lock.name + "' is lost: it cannot be extended",
                lost);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
