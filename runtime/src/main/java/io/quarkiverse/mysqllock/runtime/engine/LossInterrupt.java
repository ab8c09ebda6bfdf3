package io.quarkiverse.mysqllock.runtime.engine;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;

/**
 * Interrupts the thread that armed it if the lock is lost before it is disarmed ({@code interruptOnLoss}): work
 * blocked in I/O or a wait stops instead of running on unprotected. No interrupt comes after the disarm (a loss heard
 * later, on a thread that now runs other work, interrupts nothing), and a disarm on the worker thread clears the
 * interrupt this caused, so that a pooled thread goes back clean.
 */
public final class LossInterrupt {

    private final Thread worker = Thread.currentThread();
    /** Guarded by this. */
    private boolean armed = true;
    /** Whether this interrupted the worker; guarded by this. */
    private boolean interrupted;

    private LossInterrupt() {
    }

    /** Interrupts the calling thread if {@code handle}'s lock is lost, until {@link #disarm()}. */
    public static LossInterrupt arm(LockHandle handle) {
        LossInterrupt interrupt = new LossInterrupt();
        handle.onLost(interrupt::lost);
        return interrupt;
    }

    private synchronized void lost(LockLostException loss) {
        if (armed && !worker.isInterrupted()) {
            // only an interrupt this caused is cleared later: one already pending (another's, a nested hold's) is kept
            interrupted = true;
            worker.interrupt();
        }
    }

    /**
     * No interrupt after this; the one this caused is cleared if the worker itself disarms (should the work have taken
     * it and been interrupted again by someone else meanwhile, that interrupt is cleared with it).
     */
    public synchronized void disarm() {
        armed = false;
        if (interrupted && Thread.currentThread() == worker) {
            interrupted = false;
            Thread.interrupted();
        }
    }
}
