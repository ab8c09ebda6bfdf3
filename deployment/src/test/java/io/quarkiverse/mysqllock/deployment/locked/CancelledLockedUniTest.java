package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;

/**
 * A cancellation ends a {@code @Locked} method's lock. Work that ignores the cancellation (a {@code CompletionStage}
 * behind the method's {@code Uni}) runs on without the lock while the next holder starts, so the method is told
 * through its {@code LockHandle}: its {@code onLost} listeners hear {@code CANCELLED}, once, before the release.
 * Before, the lock was released without a word to them: the name was free on the server, another session
 * was granted it while the work still ran, and the listener was never called.
 */
class CancelledLockedUniTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Exports.class, Work.class);

    private static final Duration DEADLINE = Duration.ofSeconds(10);

    @Inject
    Exports exports;

    @Inject
    LockManager locks;

    /** Cancelled while its Uni runs: that Uni is cancelled, the listeners told, then the lock released. */
    @Test
    void cancellingTheUniWhileItsWorkRunsTellsTheMethodsListeners() throws Exception {
        Work work = new Work();
        Cancellable subscription = exports.export("c1", work, null).subscribe()
                .with(item -> work.outcomes.incrementAndGet(), failure -> work.outcomes.incrementAndGet());
        LockHandle lock = work.given.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        LockApp.await("the method's Uni to run under the lock", DEADLINE,
                () -> ServerState.holder("export:c1").isPresent());

        subscription.cancel();

        LockApp.await("the method to be told and its lock to end", DEADLINE,
                () -> work.lost.get() != null && ServerState.holder("export:c1").isEmpty());
        assertThat(work.lost.get().reason()).isEqualTo(LockLostException.Reason.CANCELLED);
        assertThat(work.lost.get().lockName()).isEqualTo("export:c1");
        assertThat(work.running).as("the work ignored the cancellation: it still runs").isNotDone();
        assertThat(lock.isValid()).isFalse();
        // the next holder may start now
        assertThat(LockApp.otherThreadAcquires(locks, "export:c1")).isTrue();
        // a listener registered after the cancellation hears it at once, on the calling thread
        AtomicReference<LockLostException> late = new AtomicReference<>();
        lock.onLost(late::set);
        assertThat(late.get()).isNotNull();
        assertThat(late.get().reason()).isEqualTo(LockLostException.Reason.CANCELLED);

        work.running.complete("done"); // the ignored work ends: nothing more happens
        assertThat(work.told.get()).as("listener calls").isEqualTo(1);
        assertThat(work.outcomes.get()).as("a cancelled subscriber hears no outcome").isZero();
        assertThat(locks.held()).isEmpty();
    }

    /**
     * Cancelled while the method builds its Uni: the lock is kept while the method runs (never released under it), then
     * ends once it returned, its Uni never subscribed, and the method is told as above.
     */
    @Test
    void cancellingTheUniWhileItsMethodRunsTellsTheMethodOnceItReturned() throws Exception {
        Work work = new Work();
        CountDownLatch proceed = new CountDownLatch(1);
        Cancellable subscription = exports.slowlyBuilt("c2", work, proceed, null).subscribe()
                .with(item -> work.outcomes.incrementAndGet(), failure -> work.outcomes.incrementAndGet());
        LockHandle lock = work.given.get(DEADLINE.toSeconds(), TimeUnit.SECONDS); // the method waits for proceed

        subscription.cancel();

        assertThat(ServerState.holder("export:c2")).as("held while the method still runs").isPresent();
        assertThat(work.lost.get()).as("not told while the method still runs under its lock").isNull();
        proceed.countDown();
        LockApp.await("the method to be told and its lock to end", DEADLINE,
                () -> work.lost.get() != null && ServerState.holder("export:c2").isEmpty());
        assertThat(work.lost.get().reason()).isEqualTo(LockLostException.Reason.CANCELLED);
        assertThat(lock.isValid()).isFalse();
        assertThat(work.running).as("the work it started ignored the cancellation").isNotDone();

        work.running.complete("done");
        assertThat(work.told.get()).as("listener calls").isEqualTo(1);
        assertThat(work.outcomes.get()).as("a cancelled subscriber hears no outcome").isZero();
        assertThat(locks.held()).isEmpty();
    }

    /**
     * Nothing cancels a {@code CompletionStage} method: its caller cancelling the future it got ends neither the
     * method's work nor its lock, which is held until the method's own stage completes, and released, not lost.
     */
    @Test
    void cancellingACompletionStageResultLeavesTheLockToTheMethodsOwnStage() throws Exception {
        Work work = new Work();
        CompletableFuture<String> result = exports.staged("c3", work, null).toCompletableFuture();
        LockHandle lock = work.given.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);

        assertThat(result.cancel(true)).isTrue();

        assertThat(ServerState.holder("export:c3")).as("held for the method's own stage").isPresent();
        assertThat(lock.isValid()).isTrue();
        work.running.complete("done");
        LockApp.await("the lock to be released once the method's stage completed", DEADLINE,
                () -> ServerState.holder("export:c3").isEmpty());
        assertThat(work.told.get()).as("a release is no loss").isZero();
        assertThat(locks.held()).isEmpty();
    }

    /** A method's work, which goes on whatever becomes of its result, and what the method was told. */
    public static final class Work {
        /** The work itself: the test completes it; cancelling a Uni or a stage derived from it does not. */
        final CompletableFuture<String> running = new CompletableFuture<>();
        /** The method's lock, given once its listener is registered. */
        final CompletableFuture<LockHandle> given = new CompletableFuture<>();
        final AtomicReference<LockLostException> lost = new AtomicReference<>();
        final AtomicInteger told = new AtomicInteger();
        /** Items and failures the caller received. */
        final AtomicInteger outcomes = new AtomicInteger();

        void hear(LockLostException loss) {
            told.incrementAndGet();
            lost.set(loss);
        }

        /** What the method returns: a stage derived from the work, so a cancellation reaches that stage only. */
        CompletionStage<String> result() {
            return running.thenApply(Function.identity());
        }
    }

    @ApplicationScoped
    public static class Exports {

        @Locked("export:{id}")
        public Uni<String> export(String id, Work work, LockHandle lock) {
            lock.onLost(work::hear); // "stop the work from onLost"
            work.given.complete(lock);
            return Uni.createFrom().completionStage(work.result());
        }

        @Locked("export:{id}")
        public Uni<String> slowlyBuilt(String id, Work work, CountDownLatch proceed, LockHandle lock) {
            lock.onLost(work::hear);
            CompletionStage<String> started = work.result(); // started before the Uni is built: it runs regardless
            work.given.complete(lock);
            try {
                // the test lets it go; a hold that ended by itself would no longer be the one the test checks
                if (!proceed.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the method return");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Uni.createFrom().completionStage(started);
        }

        @Locked("export:{id}")
        public CompletionStage<String> staged(String id, Work work, LockHandle lock) {
            lock.onLost(work::hear);
            work.given.complete(lock);
            return work.result();
        }
    }
}
