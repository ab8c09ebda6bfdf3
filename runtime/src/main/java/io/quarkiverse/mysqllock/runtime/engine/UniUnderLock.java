package io.quarkiverse.mysqllock.runtime.engine;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.quarkiverse.mysqllock.LockLostException;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.operators.AbstractUni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;

/**
 * A {@code Uni} run under a lock (a {@code @Locked} method's, {@code LockManager.withLockAsync}'s): at subscription the
 * lock is acquired, then the method runs and its {@code Uni} is subscribed, and the lock is released before its outcome goes
 * on. A cancellation releases
 * the lock whenever it comes: while the lock is awaited (the acquisition gives back a late grant), while the method
 * builds its {@code Uni} (once the method returned: the lock still covers it while it runs), or while that runs (its
 * {@code Uni} cancelled first, then the lock released).
 * <p>
 * A hold that a cancellation ends once the method was called is ended by {@link Outcomes#cancelled}: for a
 * {@code @Locked} method, its lock is reported lost ({@code CANCELLED}) to the listeners of its {@code LockHandle}
 * before the release, since work that ignores the cancellation runs on without the lock.
 * <p>
 * One state per subscription decides who releases, once: Mutiny's operators stop relaying a cancellation upstream once
 * an item went down, so a chain of them between the acquisition and the method lost the lock of a cancellation that
 * came in between (the lock stayed held for good).
 */
public final class UniUnderLock extends AbstractUni<Object> {

    /** Runs the method under the lock it was granted; it may throw anything. */
    @FunctionalInterface
    public interface Method {
        Uni<?> run(ControlledHandle handle) throws Throwable;
    }

    /** What becomes of an acquisition or a method's outcome. */
    public interface Outcomes {
        /** Whether a failed acquisition means "skip the method" (a busy lock and {@code onBusy = SKIP}). */
        default boolean skips(Throwable failure) {
            return false;
        }

        /**
         * The method was skipped (a busy lock, or a tick that already ran): told once, never throws.
         *
         * @param startNanos when the subscription began
         */
        default void skipped(long startNanos) {
        }

        /**
         * The call that held {@code handle} ended so ({@code failure} what the method failed with, or null),
         * {@code startNanos} being when the subscription began: for the metrics and a job's history; never throws. A
         * lock not acquired ends with a null handle.
         */
        default void ended(ControlledHandle handle, LockMetrics.MethodOutcome outcome, Throwable failure,
                long startNanos) {
        }

        /**
         * Releases the hold, answering the loss of the lock while it was held, if any.
         *
         * @param startNanos when the subscription began ({@link System#nanoTime()}): {@code atLeastFor} counts from it
         */
        LockLostException release(ControlledHandle handle, long startNanos);

        /** The failure of the method, with the loss of its lock added to it if there was one. */
        Throwable withLoss(Throwable failure, LockLostException lost);

        /** The failure of a method that succeeded while its lock was lost. */
        Throwable lost(LockLostException lost);

        /**
         * Ends the hold of a run cancelled after the method was called, once, its outcome going nowhere: by default
         * released as {@link #release} does. A method that reached its lock (a {@code @Locked} method's
         * {@code LockHandle} parameter) is told instead, before the release ({@link ControlledHandle#abandon}).
         *
         * @param startNanos when the subscription began
         */
        default void cancelled(ControlledHandle handle, long startNanos) {
            release(handle, startNanos);
        }

        /**
         * Whether the method's own failure is its caller's cancellation reaching it (a Kotlin {@code suspend} function
         * that ended with {@code CancellationException}): its hold then ends as a cancelled one
         * ({@link #cancelled}), and the caller hears the loss with the failure.
         */
        default boolean cancelledBy(Throwable failure) {
            return false;
        }
    }

    private final Supplier<Uni<ControlledHandle>> acquisition;
    private final Method method;
    private final Outcomes outcomes;

    public UniUnderLock(Supplier<Uni<ControlledHandle>> acquisition, Method method, Outcomes outcomes) {
        this.acquisition = acquisition;
        this.method = method;
        this.outcomes = outcomes;
    }

    @Override
    public void subscribe(UniSubscriber<? super Object> downstream) {
        Run run = new Run(downstream);
        downstream.onSubscribe(run);
        run.start();
    }

    private static final Object ACQUIRING = new Object();
    private static final Object DONE = new Object();
    private static final Object CANCELLED = new Object();

    /** A lock held for the method's Uni: released once, by its outcome or by a cancellation. */
    private static final class Held {
        final ControlledHandle handle;
        final AtomicBoolean released = new AtomicBoolean();
        volatile UniSubscription method;

        Held(ControlledHandle handle) {
            this.handle = handle;
        }
    }

    /** One subscription: ACQUIRING, then a {@link Held} while the method runs, then DONE; or CANCELLED. */
    private final class Run implements UniSubscription {

        private final UniSubscriber<? super Object> downstream;
        private final AtomicReference<Object> state = new AtomicReference<>(ACQUIRING);
        private volatile UniSubscription acquiring;
        private final long startNanos = System.nanoTime();

        Run(UniSubscriber<? super Object> downstream) {
            this.downstream = downstream;
        }

        void start() {
            Uni<ControlledHandle> acquire;
            try {
                acquire = acquisition.get();
            } catch (Throwable failure) {
                notAcquired(failure);
                return;
            }
            acquire.subscribe().withSubscriber(new UniSubscriber<ControlledHandle>() {
                @Override
                public void onSubscribe(UniSubscription subscription) {
                    acquiring = subscription;
                    if (state.get() == CANCELLED) {
                        subscription.cancel(); // the acquisition gives back whatever it is granted later
                    }
                }

                @Override
                public void onItem(ControlledHandle handle) {
                    acquired(handle);
                }

                @Override
                public void onFailure(Throwable failure) {
                    notAcquired(failure);
                }
            });
        }

        private void notAcquired(Throwable failure) {
            if (!state.compareAndSet(ACQUIRING, DONE)) {
                return; // cancelled: nobody waits for the answer
            }
            if (outcomes.skips(failure)) {
                outcomes.skipped(startNanos);
                downstream.onItem(null);
            } else {
                outcomes.ended(null, LockMetrics.MethodOutcome.NOT_ACQUIRED, failure, startNanos);
                downstream.onFailure(failure);
            }
        }

        private void acquired(ControlledHandle handle) {
            if (handle == null) {
                // nothing held: this tick already ran elsewhere
                if (state.compareAndSet(ACQUIRING, DONE)) {
                    outcomes.skipped(startNanos);
                    downstream.onItem(null);
                }
                return;
            }
            Held held = new Held(handle);
            if (!state.compareAndSet(ACQUIRING, held)) {
                handle.release(); // cancelled as it was granted
                return;
            }
            Uni<?> result;
            try {
                result = method.run(handle);
            } catch (Throwable failure) {
                finish(held, null, failure);
                return;
            }
            if (result == null) {
                finish(held, null, new NullPointerException("The @Locked method returned null instead of a Uni"));
                return;
            }
            if (state.get() != held) {
                // cancelled while the method ran: ended once it returned, its Uni never started
                releaseCancelled(held);
                return;
            }
            result.subscribe().withSubscriber(new UniSubscriber<Object>() {
                @Override
                public void onSubscribe(UniSubscription subscription) {
                    held.method = subscription;
                    if (state.get() != held) {
                        // cancelled as its Uni was subscribed: stopped, then its lock ended
                        subscription.cancel();
                        releaseCancelled(held);
                    }
                }

                @Override
                public void onItem(Object item) {
                    finish(held, item, null);
                }

                @Override
                public void onFailure(Throwable failure) {
                    finish(held, null, failure);
                }
            });
        }

        /** The method's outcome: the lock released, then the caller told. */
        private void finish(Held held, Object item, Throwable failure) {
            if (!state.compareAndSet(held, DONE)) {
                releaseCancelled(held); // cancelled: nobody waits for the outcome, and the lock ends (once) now
                return;
            }
            LockLostException lost;
            try {
                if (failure != null && outcomes.cancelledBy(failure)) {
                    releaseCancelled(held);
                    lost = held.handle.loss(); // CANCELLED, or a loss found before it
                } else {
                    lost = release(held);
                }
            } catch (Throwable releaseFailure) {
                // the caller must hear the outcome whatever the release did
                if (failure != null) {
                    failure.addSuppressed(releaseFailure);
                    downstream.onFailure(failure);
                } else {
                    downstream.onFailure(releaseFailure);
                }
                return;
            }
            outcomes.ended(held.handle, LockMetrics.MethodOutcome.ran(lost, failure), failure, startNanos);
            if (failure != null) {
                downstream.onFailure(outcomes.withLoss(failure, lost));
            } else if (lost != null) {
                downstream.onFailure(outcomes.lost(lost));
            } else {
                downstream.onItem(item);
            }
        }

        private LockLostException release(Held held) {
            return held.released.compareAndSet(false, true) ? outcomes.release(held.handle, startNanos) : null;
        }

        /** Ends the hold of a cancelled run, once ({@link Outcomes#cancelled}). */
        private void releaseCancelled(Held held) {
            if (held.released.compareAndSet(false, true)) {
                outcomes.cancelled(held.handle, startNanos);
            }
        }

        @Override
        public void cancel() {
            Object previous = state.getAndSet(CANCELLED);
            if (previous == ACQUIRING) {
                UniSubscription subscription = acquiring;
                if (subscription != null) {
                    subscription.cancel();
                }
            } else if (previous instanceof Held held) {
                UniSubscription subscription = held.method;
                if (subscription != null) {
                    // the method's Uni stops first, then its lock ends: its holder told, then the lock released
                    subscription.cancel();
                    releaseCancelled(held);
                }
                // else the method still runs, or its Uni is being subscribed: released once it returned
            }
        }
    }
}
