package io.quarkiverse.mysqllock.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.test.Background;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkus.test.QuarkusUnitTest;

/** acquireForTransaction: a row lock that lives exactly as long as the caller's transaction. */
class TransactionScopedLockTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Work.class);

    @Inject
    LockManager locks;

    @Inject
    Work work;

    @Test
    void withoutATransactionItIsRefused() {
        assertThatThrownBy(() -> locks.acquireForTransaction("txl:none", Duration.ZERO))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs an active JTA transaction").hasMessageContaining("@Transactional");
    }

    @Test
    void theLockLastsUntilCommit() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Void> holder = Background.run(() -> work.underLock("txl:commit", Duration.ZERO, () -> {
            held.countDown();
            await(finish);
        }));
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();

        LockNotAcquiredException busy = Background.supply(() -> {
            try {
                work.underLock("txl:commit", Duration.ZERO, () -> {
                });
                throw new AssertionError("locked a row another transaction holds");
            } catch (LockNotAcquiredException e) {
                return e;
            }
        }).get(10, TimeUnit.SECONDS);
        assertThat(busy.reason()).isEqualTo(LockNotAcquiredException.Reason.BUSY);

        long start = System.nanoTime();
        CompletableFuture<Long> waiter = Background.supply(() -> {
            work.underLock("txl:commit", Duration.ofSeconds(10), () -> {
            });
            return System.nanoTime();
        });
        LockApp.await("the waiter to block on the row", Duration.ofSeconds(5), () -> ServerState.queryLong(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT fence FROM mysql_lock%FOR UPDATE%'") > 0);
        long releasedAt = System.nanoTime();
        finish.countDown();
        holder.get(10, TimeUnit.SECONDS);
        long acquiredAt = waiter.get(10, TimeUnit.SECONDS);
        assertThat(acquiredAt).isGreaterThan(releasedAt);
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt - releasedAt)).isLessThan(1000);
        assertThat(start).isPositive();
    }

    @Test
    void aRollbackEndsTheLockToo() throws Exception {
        assertThatThrownBy(() -> work.underLock("txl:rollback", Duration.ZERO, () -> {
            throw new IllegalStateException("roll back");
        })).hasMessage("roll back");
        Background.run(() -> work.underLock("txl:rollback", Duration.ZERO, () -> {
        })).get(10, TimeUnit.SECONDS);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Singleton
    public static class Work {
        @Inject
        LockManager locks;

        @Transactional
        public void underLock(String name, Duration wait, Runnable inside) {
            locks.acquireForTransaction(name, wait);
            inside.run();
        }
    }
}
