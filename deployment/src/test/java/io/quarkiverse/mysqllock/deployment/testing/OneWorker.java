package io.quarkiverse.mysqllock.deployment.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.runtime.LockNames;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;

/** Asynchronous acquisitions that all run on one worker thread, as they can in production, for both engines' tests. */
public final class OneWorker {

    private OneWorker() {
    }

    /** Two async acquisitions of one name run on the same worker thread: the second must find the lock busy. */
    public static void noNestingOnOneWorker(LockManager locks, String name) throws Exception {
        java.util.concurrent.ExecutorService worker = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            MySqlLockManager oneWorker = new MySqlLockManager(((MySqlLockManager) locks).engine(),
                    LockNames.withNamespace(null), Duration.ZERO, worker, null, null);
            LockHandle first = oneWorker.acquireAsync(name, Duration.ZERO).await().atMost(Duration.ofSeconds(10));
            assertThat(LockApp.otherThreadAcquires(locks, name)).isFalse();
            CompletableFuture<Throwable> second = new CompletableFuture<>();
            oneWorker.acquireAsync(name, Duration.ZERO).subscribe().with(
                    handle -> second.completeExceptionally(new AssertionError("nested onto another async hold")),
                    second::complete);
            assertThat(second.get(10, TimeUnit.SECONDS)).isInstanceOf(LockNotAcquiredException.class);
            first.release();
            LockHandle third = oneWorker.acquireAsync(name, Duration.ZERO).await().atMost(Duration.ofSeconds(10));
            third.release();
            assertThat(LockApp.otherThreadAcquires(locks, name)).isTrue();
        } finally {
            worker.shutdown();
        }
    }
}
