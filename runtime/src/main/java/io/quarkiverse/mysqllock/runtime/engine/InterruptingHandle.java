package io.quarkiverse.mysqllock.runtime.engine;

import io.quarkiverse.mysqllock.LockLostException;

/**
 * A hold that interrupts the thread it was taken on if its lock is lost before it is released
 * ({@code LockOptions.interruptingOnLoss()}), as {@link LossInterrupt} says.
 */
public final class InterruptingHandle extends ControlledHandleDecorator {

    private final LossInterrupt interrupt;

    private InterruptingHandle(ControlledHandle handle) {
        super(handle);
        this.interrupt = LossInterrupt.arm(handle);
    }

    /** The hold, interrupting the calling thread on a loss until released. */
    public static ControlledHandle of(ControlledHandle handle) {
        return new InterruptingHandle(handle);
    }

    @Override
    public void release() {
        interrupt.disarm();
        handle.release();
    }

    @Override
    public LockLostException releaseReportingLoss() {
        interrupt.disarm();
        return handle.releaseReportingLoss();
    }

    @Override
    public void abandon(String why) {
        interrupt.disarm();
        handle.abandon(why);
    }
}
