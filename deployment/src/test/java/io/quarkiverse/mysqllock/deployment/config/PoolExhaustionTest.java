package io.quarkiverse.mysqllock.deployment.config;

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
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/**
 * Without shared connections each thread holding locks pins a connection (the pool's third is kept for the engine's
 * housekeeping): an exhausted pool fails the acquisition within its wait, never hangs.
 */
class PoolExhaustionTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app()
            .overrideConfigKey("quarkus.datasource.jdbc.max-size", "3")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.connection-wait", "300ms")
            .overrideRuntimeConfigKey("quarkus.mysql-lock.named.shared-connections", "0");

    @Inject
    LockManager locks;

    @Test
    void anExhaustedPoolFailsFastWithTheSettingToChange() throws Exception {
        // Threads of their own: one thread's locks would share one connection.
        LockHandle first = Background.supply(() -> locks.acquire("pool:1", Duration.ZERO)).get();
        LockHandle second = Background.supply(() -> locks.acquire("pool:2", Duration.ZERO)).get();

        long start = System.nanoTime();
        LockNotAcquiredException failure = Background.supply(() -> {
            try {
                locks.tryAcquire("pool:3");
                throw new AssertionError("acquired with an exhausted pool");
            } catch (LockNotAcquiredException e) {
                return e;
            }
        }).get(10, TimeUnit.SECONDS);
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(failure.reason()).isEqualTo(LockNotAcquiredException.Reason.POOL_EXHAUSTED);
        assertThat(failure.getMessage()).contains("quarkus.datasource.jdbc.max-size").contains("max-size 3");
        // its 300 ms connection-wait, not the pool's acquisition-timeout (5 s): the bound leaves a busy machine the rest
        assertThat(elapsedMillis).isBetween(250L, 4500L);

        // A wait longer than the pool stays exhausted still ends in time: the pool's acquisition-timeout (5 s) is
        // not what decides.
        start = System.nanoTime();
        LockNotAcquiredException longer = Background.supply(() -> {
            try {
                locks.acquire("pool:3", Duration.ofMillis(700));
                throw new AssertionError("acquired with an exhausted pool");
            } catch (LockNotAcquiredException e) {
                return e;
            }
        }).get(10, TimeUnit.SECONDS);
        assertThat(longer.reason()).isEqualTo(LockNotAcquiredException.Reason.POOL_EXHAUSTED);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(650L, 4500L);

        // Within a longer wait, a connection that comes free is used.
        CompletableFuture<LockHandle> waiting = Background.supply(() -> locks.acquire("pool:3", Duration.ofSeconds(5)));
        first.release();
        LockHandle third = waiting.get(10, TimeUnit.SECONDS);
        assertThat(third.isValid()).isTrue();
        third.release();
        second.release();
    }
}
