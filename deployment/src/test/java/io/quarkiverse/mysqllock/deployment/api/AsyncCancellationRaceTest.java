package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.TimeoutException;
import io.smallrye.mutiny.subscription.UniSubscriber;
import io.smallrye.mutiny.subscription.UniSubscription;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * A subscriber that gives up (a time-out) after the worker was granted the lock but before the handle reached it,
 * because the event loop that must deliver it is busy: the handle is dropped by Mutiny, so the acquisition itself must
 * release the lock, or it stays held (and its connection pinned, or its lease renewed) for good.
 */
class AsyncCancellationRaceTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Inject
    Vertx vertx;

    @Test
    void aTimeOutThatFiresWhileTheEventLoopIsBusyDoesNotLeakTheLock() throws Exception {
        for (int round = 0; round < 3; round++) {
            String name = "async-race:" + round;
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
            Context context = vertx.getOrCreateContext();
            context.runOnContext(ignored -> {
                locks.acquireAsync(name, Duration.ZERO).ifNoItem().after(Duration.ofMillis(100)).on(timer).fail()
                        .subscribe().with(handle -> outcome.completeExceptionally(
                                new AssertionError("the handle arrived, the event loop was not busy long enough")),
                                outcome::complete);
                // The grant's delivery queues behind this; the time-out fires on the timer's thread meanwhile. Busy
                // for 700 ms, and on until the time-out has fired (a timer thread late on a busy machine could let a
                // fixed time pass first), 10 s at most.
                long start = System.nanoTime();
                while ((System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(700) || !outcome.isDone())
                        && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10)) {
                    Thread.onSpinWait();
                }
            });
            try {
                assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(TimeoutException.class);
            } finally {
                timer.shutdown();
            }
            LockApp.await("the grant nobody received to be released", Duration.ofSeconds(30),
                    () -> ServerState.holder(name).isEmpty() && locks.held().isEmpty());
        }
    }

    /**
     * Mutiny's operators forward a cancellation upstream after the item went by (a transform does), and drop an item
     * that races a cancellation: a cancellation after the delivery releases the lock, and a subscriber that kept the
     * handle is told it is lost (it used to be released without a word to a subscriber that may be using it).
     */
    @Test
    void aCancellationAfterTheDeliveryReleasesTheLockAndTellsItsHolder() throws Exception {
        String name = "async-late-cancel";
        Context context = vertx.getOrCreateContext();
        CompletableFuture<LockHandle> delivered = new CompletableFuture<>();
        AtomicReference<LockLostException> lost = new AtomicReference<>();
        Subscriber subscriber = new Subscriber(handle -> {
            handle.onLost(lost::set);
            delivered.complete(handle);
        }, false);
        context.runOnContext(ignored -> locks.acquireAsync(name, Duration.ZERO).onItem().transform(handle -> handle)
                .subscribe().withSubscriber(subscriber));
        LockHandle handle = delivered.get(10, TimeUnit.SECONDS);
        assertThat(handle.isValid()).isTrue();
        // after onItem returned: the delivery and this run on the same event loop, one after the other
        context.runOnContext(ignored -> subscriber.subscription.cancel());
        LockApp.await("the lock to be released and its holder told", Duration.ofSeconds(30),
                () -> lost.get() != null && ServerState.holder(name).isEmpty());
        assertThat(lost.get().reason()).isEqualTo(LockLostException.Reason.CANCELLED);
        assertThat(handle.isValid()).isFalse();
        assertThat(locks.held()).isEmpty();
        handle.release(); // nothing more to do
    }

    /**
     * A time-out firing as the handle arrives: the operator cancels, then drops the item it was about to pass on. The
     * lock is released at once, not when (if ever) the dropped handle is collected.
     */
    @Test
    void aHandleDroppedAsItsSubscriptionIsCancelledIsReleasedAtOnce() throws Exception {
        String name = "async-dropped";
        CompletableFuture<String> delivered = new CompletableFuture<>();
        locks.acquireAsync(name, Duration.ZERO).subscribe()
                .withSubscriber(new Subscriber(handle -> delivered.complete(handle.name()), true));
        assertThat(delivered.get(10, TimeUnit.SECONDS)).isEqualTo(name);
        LockApp.await("the dropped handle's lock to be released", Duration.ofSeconds(30),
                () -> ServerState.holder(name).isEmpty() && locks.held().isEmpty());
    }

    /** Takes the item, and cancels its subscription from inside onItem if asked to (a downstream time-out racing it). */
    private static final class Subscriber implements UniSubscriber<LockHandle> {
        private final Consumer<LockHandle> onItem;
        private final boolean cancelInOnItem;
        volatile UniSubscription subscription;

        Subscriber(Consumer<LockHandle> onItem, boolean cancelInOnItem) {
            this.onItem = onItem;
            this.cancelInOnItem = cancelInOnItem;
        }

        @Override
        public void onSubscribe(UniSubscription subscription) {
            this.subscription = subscription;
        }

        @Override
        public void onItem(LockHandle item) {
            onItem.accept(item);
            if (cancelInOnItem) {
                subscription.cancel();
            }
        }

        @Override
        public void onFailure(Throwable failure) {
            throw new AssertionError(failure);
        }
    }
}
