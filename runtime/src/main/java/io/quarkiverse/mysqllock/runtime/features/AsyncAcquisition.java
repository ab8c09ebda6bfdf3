package io.quarkiverse.mysqllock.runtime.features;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * A {@code Uni} that acquires a lock on a worker thread at subscription and delivers the result on the subscriber's
 * Vert.x context when it has one (so the work that follows runs where it was started, on its event loop).
 * <p>
 * A granted handle is never left held by a cancelled subscription. The grant and its delivery are two steps, with the
 * context's queue between them: a cancellation that comes before the grant releases it when it comes, and one that
 * comes between the grant and the delivery releases it instead of delivering it. A cancellation that comes while the
 * subscriber takes the handle, or later, releases it too, reported lost with reason {@code CANCELLED}: Mutiny's
 * operators drop an item that races a cancellation (a time-out firing as the handle arrives), and nothing tells this
 * {@code Uni} whether the handle went on, so a subscriber that kept it is told instead.
 * <p>
 * A cancellation that comes while the lock is awaited interrupts the worker thread's wait, so that the acquisition
 * leaves its place in the instance's queue for the name: threads waiting in the JVM leave at once, LEASE's polling
 * stops, and a NAMED wait already under way on the server (one per name and instance) is ended there within about
 * 100 ms ({@code KILL QUERY} of its session); a grant that came first is given back. One cancelled before its worker
 * started never acquires.
 */
public final class AsyncAcquisition<H extends ControlledHandle> extends AbstractUni<H> {

    private final Supplier<H> acquisition;
    private final Executor worker;

    public AsyncAcquisition(Supplier<H> acquisition, Executor worker) {
        this.acquisition = acquisition;
        this.worker = worker;
    }

    @Override
    public void subscribe(UniSubscriber<? super H> subscriber) {
        Delivery delivery = new Delivery(subscriber, Vertx.currentContext());
        subscriber.onSubscribe(delivery);
        try {
            worker.execute(delivery::acquire);
        } catch (RuntimeException rejected) {
            delivery.fail(rejected);
        }
    }

    /** The states of one subscription: waiting, then granted (the handle itself), then delivered; or cancelled. */
    private static final Object WAITING = new Object();
    private static final Object CANCELLED = new Object();
    private static final Object DONE = new Object();

    private final class Delivery implements UniSubscription {

        private final UniSubscriber<? super H> subscriber;
        private final Context context;
        /**
         * WAITING, the granted handle before its delivery (or a marker of a failure or empty item before its delivery),
         * DONE once delivered, or CANCELLED.
         */
        private final AtomicReference<Object> state = new AtomicReference<>(WAITING);
        /** The handle given to the subscriber, set before it is. */
        private volatile H delivered;
        /** The worker thread while it acquires; guarded by this. */
        private Thread runner;
        /** Whether a cancellation interrupted {@link #runner}, whose interrupt is then cleared; guarded by this. */
        private boolean interruptedByCancel;

        Delivery(UniSubscriber<? super H> subscriber, Context context) {
            this.subscriber = subscriber;
            this.context = context;
        }

        void acquire() {
            synchronized (this) {
                if (state.get() == CANCELLED) {
                    return; // cancelled before the worker started: nothing to wait for
                }
                runner = Thread.currentThread();
            }
            H handle;
            try {
                handle = acquisition.get();
            } catch (Throwable failure) {
                fail(failure);
                return;
            } finally {
                synchronized (this) {
                    runner = null;
                    if (interruptedByCancel) {
                        Thread.interrupted(); // the worker goes back to its pool as it came
                    }
                }
            }
            if (handle == null) {
                // nothing held (a tick that already ran): an empty item
                deliver(() -> subscriber.onItem(null));
                return;
            }
            if (!state.compareAndSet(WAITING, handle)) {
                handle.release(); // cancelled while waiting for the lock
                return;
            }
            onContext(() -> {
                delivered = handle;
                if (state.compareAndSet(handle, DONE)) {
                    subscriber.onItem(handle);
                } else {
                    handle.release(); // cancelled while the delivery waited for the context
                }
            });
        }

        void fail(Throwable failure) {
            deliver(() -> subscriber.onFailure(failure));
        }

        /**
         * Delivers an outcome that holds nothing (a failure, an empty item) on the context, unless the subscription is
         * cancelled before it gets there: a time-out that fired meanwhile has answered the subscriber already, and
         * Mutiny would log the late failure as dropped.
         */
        private void deliver(Runnable outcome) {
            Object pending = new Object();
            if (state.compareAndSet(WAITING, pending)) {
                onContext(() -> {
                    if (state.compareAndSet(pending, DONE)) {
                        outcome.run();
                    }
                });
            }
        }

        @Override
        public void cancel() {
            Object previous = state.getAndSet(CANCELLED);
            if (previous == WAITING) {
                synchronized (this) {
                    if (runner != null) {
                        interruptedByCancel = true;
                        runner.interrupt(); // leaves its place in the queue for the name
                    }
                }
            } else if (previous == DONE) {
                H handle = delivered;
                if (handle != null) {
                    handle.abandon("its acquireAsync subscription was cancelled after the handle was delivered (a"
                            + " time-out racing the grant, in which race Mutiny drops the handle, or the pipeline"
                            + " cancelled)");
                }
            } else if (previous instanceof ControlledHandle granted) {
                granted.release();
            }
        }

        private void onContext(Runnable delivery) {
            if (context == null) {
                delivery.run();
            } else {
                context.runOnContext(ignored -> delivery.run());
            }
        }
    }
}
