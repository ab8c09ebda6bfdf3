package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.OneWorker;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;

class AsyncAcquireTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void subscribingDoesNotBlockAndTheHandleArrivesWhenTheLockIsFree() throws Exception {
        LockHandle holder = locks.acquire("async:a", Duration.ZERO);
        Uni<LockHandle> uni = locks.acquireAsync("async:a", Duration.ofSeconds(10));
        CompletableFuture<LockHandle> result = new CompletableFuture<>();
        long start = System.nanoTime();
        uni.subscribe().with(result::complete, result::completeExceptionally);
        // a subscription that blocked would block until the holder's release, which comes after it: for its whole
        // 10 s wait. A busy machine can stretch a subscription that does not block, but not to seconds.
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5000);
        assertThat(result).isNotDone();

        holder.release();
        LockHandle handle = result.get(10, TimeUnit.SECONDS);
        assertThat(handle.isValid()).isTrue();
        assertThat(ServerState.holder("async:a")).isPresent();
        handle.release();
        assertThat(ServerState.holder("async:a")).isEmpty();
    }

    @Test
    void asynchronousAcquisitionsOnOneWorkerThreadDoNotNest() throws Exception {
        OneWorker.noNestingOnOneWorker(locks, "async:one-worker");
    }

    @Test
    void nothingHappensBeforeSubscription() {
        locks.acquireAsync("async:lazy", Duration.ZERO);
        assertThat(ServerState.holder("async:lazy")).isEmpty();
    }

    @Test
    void aBusyLockFailsTheUni() throws Exception {
        try (LockHandle holder = locks.acquire("async:busy", Duration.ZERO)) {
            CompletableFuture<Throwable> failure = new CompletableFuture<>();
            locks.acquireAsync("async:busy", Duration.ofMillis(100)).subscribe().with(
                    handle -> failure.completeExceptionally(new AssertionError("acquired a held lock")),
                    failure::complete);
            assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOf(LockNotAcquiredException.class);
        }
    }

    @Test
    void cancellingBeforeTheGrantReleasesTheLockWhenItComes() throws Exception {
        LockHandle holder = locks.acquire("async:cancel", Duration.ZERO);
        Cancellable subscription = locks.acquireAsync("async:cancel", Duration.ofSeconds(10)).subscribe()
                .with(handle -> {
                    throw new AssertionError("a cancelled subscriber got the lock");
                });
        LockApp.await("the acquisition to wait on the server", Duration.ofSeconds(30),
                () -> ServerState.waitingInGetLock() > 0);
        subscription.cancel();
        long holderSession = ServerState.holder("async:cancel").orElseThrow();
        holder.release();
        // The waiting acquisition gets the lock, finds its subscriber gone and releases it.
        LockApp.await("the abandoned grant to be released", Duration.ofSeconds(30),
                () -> ServerState.holder("async:cancel").isEmpty());
        assertThat(holderSession).isPositive();
    }
}
