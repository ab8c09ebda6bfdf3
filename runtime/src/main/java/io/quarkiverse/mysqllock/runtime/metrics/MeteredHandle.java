package io.quarkiverse.mysqllock.runtime.metrics;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockEvent;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandleDecorator;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;

/** A handle that reports its hold time when it is first released, and its end as an event. */
final class MeteredHandle extends ControlledHandleDecorator {

    /** Told once how a hold ended: released, or lost first. */
    @FunctionalInterface
    interface Ended {
        void ended(LockEvent.Kind kind, long heldNanos, LockLostException loss);
    }

    private final LockMetrics metrics;
    private final LockMode engine;
    private final End end;
    private final AtomicBoolean released = new AtomicBoolean();

    MeteredHandle(ControlledHandle handle, LockMetrics metrics, LockMode engine, Ended ended) {
        super(handle);
        this.metrics = metrics;
        this.engine = engine;
        this.end = new End(ended);
    }

    /**
     * The listener that tells a loss of the hold. It refers to nothing of the handle, so that a handle its holder drops
     * can still be garbage-collected (and released by the leak detection) while the engine keeps its listeners.
     */
    Consumer<LockLostException> lossListener() {
        return end::lost;
    }

    /** How the hold ends, told once: a loss, or the release. */
    private static final class End {
        /** Null when nobody observes lock events. */
        private final Ended ended;
        private final long since = System.nanoTime();
        private final AtomicBoolean told = new AtomicBoolean();

        End(Ended ended) {
            this.ended = ended;
        }

        void lost(LockLostException loss) {
            tell(LockEvent.Kind.LOST, loss);
        }

        void tell(LockEvent.Kind kind, LockLostException loss) {
            if (ended != null && told.compareAndSet(false, true)) {
                ended.ended(kind, System.nanoTime() - since, loss);
            }
        }
    }

    @Override
    public void release() {
        releaseReportingLoss();
    }

    /** The hold ended: its length, and its end event (LOST when a loss was found, by the release itself too). */
    private void heldUntilNow(LockLostException loss) {
        if (released.compareAndSet(false, true)) {
            metrics.held(engine, System.nanoTime() - end.since);
            end.tell(loss == null ? LockEvent.Kind.RELEASED : LockEvent.Kind.LOST, loss);
        }
    }

    @Override
    public LockLostException releaseReportingLoss() {
        LockLostException loss = handle.releaseReportingLoss();
        heldUntilNow(loss);
        return loss;
    }

    @Override
    public void abandon(String why) {
        handle.abandon(why);
        heldUntilNow(handle.loss());
    }
}
