package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockSkipped;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * A {@code @Locked} method returning {@code Uni} or {@code CompletionStage} that throws an {@code Error} instead of
 * returning, or returns {@code null}: the lock is released and the caller fails, whatever the method did. Before, only
 * an {@code Exception} was caught: the lock stayed held for good, and a {@code CompletionStage} caller waited for ever.
 */
class AsyncLockedFailuresTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Broken.class, FailingObserver.class);

    @Inject
    Broken broken;

    @Inject
    LockManager locks;

    @Test
    void aUniMethodThrowingAnErrorReleasesItsLockAndFailsTheCaller() {
        // Mutiny's await wraps an Error in a CompletionException
        assertThatThrownBy(() -> broken.uniError("u-error").await().atMost(Duration.ofSeconds(10)))
                .isInstanceOf(CompletionException.class).cause().isInstanceOf(AssertionError.class)
                .hasMessage("broken Uni method");
        assertReleased("async-failure:u-error");
    }

    @Test
    void aUniMethodReturningNullReleasesItsLockAndFailsTheCaller() {
        assertThatThrownBy(() -> broken.uniNull("u-null").await().atMost(Duration.ofSeconds(10)))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("uniNull")
                .hasMessageContaining("returned null");
        assertReleased("async-failure:u-null");
    }

    @Test
    void aCompletionStageMethodThrowingAnErrorReleasesItsLockAndFailsTheCaller() {
        CompletableFuture<String> outcome = broken.stageError("s-error").toCompletableFuture();
        assertThatThrownBy(() -> outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(AssertionError.class).hasMessage("broken CompletionStage method");
        assertReleased("async-failure:s-error");
    }

    @Test
    void aCompletionStageMethodReturningNullReleasesItsLockAndFailsTheCaller() {
        CompletableFuture<String> outcome = broken.stageNull("s-null").toCompletableFuture();
        assertThatThrownBy(() -> outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(NullPointerException.class).hasMessageContaining("stageNull")
                .hasMessageContaining("returned null");
        assertReleased("async-failure:s-null");
    }

    /** A failing {@code LockSkipped} observer is logged: the skipped call still answers (before, it never did). */
    @Test
    void aFailingSkipObserverLeavesTheSkippedCallAnswered() throws Exception {
        try (LockHandle held = locks.acquire("async-failure:busy", Duration.ZERO)) {
            // acquired on a worker thread, which does not nest onto this thread's hold: busy, skipped
            assertThat(broken.stageSkipped("busy").toCompletableFuture().get(10, TimeUnit.SECONDS)).isNull();
        }
        assertThat(FailingObserver.SEEN.get()).isPositive();
    }

    private static void assertReleased(String name) {
        // the release runs before the caller hears of the failure
        assertThat(ServerState.holder(name)).as("lock '%s' released", name).isEmpty();
    }

    @ApplicationScoped
    public static class Broken {

        @Locked("async-failure:{id}")
        public Uni<String> uniError(String id) {
            throw new AssertionError("broken Uni method");
        }

        @Locked("async-failure:{id}")
        public Uni<String> uniNull(String id) {
            return null;
        }

        @Locked("async-failure:{id}")
        public CompletionStage<String> stageError(String id) {
            throw new AssertionError("broken CompletionStage method");
        }

        @Locked("async-failure:{id}")
        public CompletionStage<String> stageNull(String id) {
            return null;
        }

        @Locked(value = "async-failure:{id}", onBusy = OnBusy.SKIP)
        public CompletionStage<String> stageSkipped(String id) {
            return CompletableFuture.completedFuture("ran");
        }
    }

    @ApplicationScoped
    public static class FailingObserver {
        static final AtomicInteger SEEN = new AtomicInteger();

        void skipped(@Observes LockSkipped skipped) {
            SEEN.incrementAndGet();
            throw new IllegalStateException("a failing observer of " + skipped);
        }
    }
}
