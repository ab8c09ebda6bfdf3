package io.quarkiverse.mysqllock.runtime;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.LockHandle;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * A {@code Uni} that acquires a lock on a worker thread at subscription and delivers the result on the subscriber's
 * Vert.x context when it has one (so the work that follows runs where it was started, on its event loop). Exactly one
 * of delivery and cancellation wins: a handle granted after the subscriber cancelled is released, never dropped.
 */
final class AsyncAcquisition extends AbstractUni<LockHandle> {

    private static final int WAITING = 0;
    private static final int CANCELLED = 1;
    private static final int DONE = 2;

    private final Supplier<LockHandle> acquisition;
    private final Executor worker;

    AsyncAcquisition(Supplier<LockHandle> acquisition, Executor worker) {
        this.acquisition = acquisition;
        this.worker = worker;
    }

    @Override
    public void subscribe(UniSubscriber<? super LockHandle> subscriber) {
        Context context = Vertx.currentContext();
        AtomicInteger state = new AtomicInteger(WAITING);
        subscriber.onSubscribe(new UniSubscription() {
            @Override
            public void cancel() {
                state.compareAndSet(WAITING, CANCELLED);
            }
        });
        try {
            worker.execute(() -> {
                LockHandle handle;
                try {
                    handle = acquisition.get();
                } catch (Throwable failure) {
                    if (state.compareAndSet(WAITING, DONE)) {
                        deliver(context, () -> subscriber.onFailure(failure));
                    }
                    return;
                }
                if (state.compareAndSet(WAITING, DONE)) {
                    deliver(context, () -> subscriber.onItem(handle));
                } else {
                    handle.release();
                }
            });
        } catch (RuntimeException rejected) {
            if (state.compareAndSet(WAITING, DONE)) {
                subscriber.onFailure(rejected);
            }
        }
    }

    private static void deliver(Context context, Runnable delivery) {
        if (context == null) {
            delivery.run();
        } else {
            context.runOnContext(ignored -> delivery.run());
        }
    }
}
