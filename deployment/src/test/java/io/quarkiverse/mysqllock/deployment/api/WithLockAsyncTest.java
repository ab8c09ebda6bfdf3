package io.quarkiverse.mysqllock.deployment.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;

/**
 * {@link LockManager#withLockAsync}: the lock covers the action's {@code Uni} and is released on every outcome (the
 * most common reactive-lock bug elsewhere is a lock left held by a failure or a cancellation).
 */
class WithLockAsyncTest {

    private static final Duration DEADLINE = Duration.ofSeconds(20);

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app();

    @Inject
    LockManager locks;

    @Test
    void theLockCoversTheActionsUniAndIsReleasedAfterItsItem() {
        String seen = locks.withLockAsync("async:item", Duration.ZERO, () -> Uni.createFrom().item(() -> held("async:item")))
                .await().atMost(DEADLINE);
        assertThat(seen).isEqualTo("held");
        assertThat(held("async:item")).isEqualTo("free");
    }

    @Test
    void aFailureOrAThrowingActionReleasesTheLock() {
        assertThatThrownBy(() -> locks.withLockAsync("async:failure", Duration.ZERO,
                () -> Uni.createFrom().failure(new IllegalStateException("boom"))).await().atMost(DEADLINE))
                .hasMessage("boom");
        assertThat(held("async:failure")).isEqualTo("free");
        assertThatThrownBy(() -> locks.withLockAsync("async:throws", Duration.ZERO, () -> {
            throw new IllegalArgumentException("thrown");
        }).await().atMost(DEADLINE)).hasMessage("thrown");
        assertThat(held("async:throws")).isEqualTo("free");
        assertThatThrownBy(() -> locks.withLockAsync("async:null", Duration.ZERO, () -> null).await().atMost(DEADLINE))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("returned null instead of a Uni");
        assertThat(held("async:null")).isEqualTo("free");
    }

    @Test
    void aCancellationWhileTheActionRunsReleasesTheLock() {
        CompletableFuture<Void> started = new CompletableFuture<>();
        AtomicReference<Boolean> cancelled = new AtomicReference<>(false);
        // started once the action's Uni is subscribed: a cancellation from then on must reach it
        Cancellable subscription = locks.withLockAsync("async:cancel", Duration.ZERO, () -> Uni.createFrom().<String> nothing()
                .onSubscription().invoke(() -> started.complete(null))
                .onCancellation().invoke(() -> cancelled.set(true))).subscribe().with(item -> {
                });
        started.orTimeout(20, TimeUnit.SECONDS).join();
        assertThat(held("async:cancel")).isEqualTo("held");
        subscription.cancel();
        LockApp.await("the cancelled action's lock to be released", DEADLINE, () -> held("async:cancel").equals("free"));
        assertThat(cancelled.get()).isTrue();
    }

    @Test
    void aBusyLockFailsWithoutCallingTheAction() throws Exception {
        try (LockHandle other = Background.supply(() -> locks.acquire("async:busy")).get(20, TimeUnit.SECONDS)) {
            AtomicReference<Boolean> called = new AtomicReference<>(false);
            assertThatThrownBy(() -> locks.withLockAsync("async:busy", Duration.ofMillis(200), () -> {
                called.set(true);
                return Uni.createFrom().item("ran");
            }).await().atMost(DEADLINE)).isInstanceOf(LockNotAcquiredException.class);
            assertThat(called.get()).isFalse();
        }
    }

    @Test
    void aLossWhileTheActionRunsFailsTheResult() {
        try (StandaloneLocks a = StandaloneLocks.Settings.of("async-loss-a").mode(Mode.LEASE).table("async_lock").start();
                StandaloneLocks b = StandaloneLocks.Settings.of("async-loss-b").mode(Mode.LEASE).table("async_lock")
                        .start()) {
            Uni<String> run = a.locks.withLockAsync("async:lost", Duration.ZERO, () -> Uni.createFrom().item(() -> {
                assertThat(b.locks.forceRelease("async:lost")).isTrue();
                return "done";
            }));
            assertThatThrownBy(() -> run.await().atMost(DEADLINE)).isInstanceOf(LockLostException.class)
                    .hasMessageContaining("withLockAsync action of lock 'async:lost'");
        }
    }

    @Test
    void badArgumentsAreRefusedAtOnce() {
        assertThatThrownBy(() -> locks.withLockAsync("async:bad", Duration.ZERO, null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.withLockAsync("", Duration.ZERO, () -> Uni.createFrom().item(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.withLockAsync("async:bad", Duration.ofSeconds(-1), () -> Uni.createFrom().item(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theFencingTokenCanBeHadWithoutBlocking() throws Exception {
        try (LockHandle lock = locks.acquire("async:token")) {
            long token = lock.fencingTokenAsync().await().atMost(DEADLINE);
            assertThat(token).isPositive().isEqualTo(lock.fencingToken());
        }
    }

    /** Whether another thread finds the name held now. */
    private String held(String name) {
        return LockApp.freeFor(locks, name) ? "free" : "held";
    }
}
