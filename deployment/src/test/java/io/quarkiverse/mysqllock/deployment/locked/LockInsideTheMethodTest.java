package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
import io.quarkiverse.mysqllock.runtime.LockNames;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;

/**
 * A {@code @Locked} method reaches its own lock: through a {@link LockHandle} parameter the interceptor fills, or
 * {@link LockManager#currentLock()} (for {@code @Scheduled} methods, whose parameters the scheduler decides).
 */
class LockInsideTheMethodTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Jobs.class, Inner.class);

    @Inject
    Jobs jobs;

    @Inject
    LockManager locks;

    @Test
    void theParameterIsTheMethodsOwnLock() {
        List<String> seen = jobs.report("7", null);
        assertThat(seen.get(0)).isEqualTo("report:7");
        assertThat(Long.parseLong(seen.get(1))).isPositive();
        assertThat(seen.get(2)).isEqualTo("true");
        assertThat(seen.get(3)).as("the same hold as currentLock()").isEqualTo("true");
        // whatever the caller passes is replaced
        try (LockHandle other = locks.acquire("another-lock")) {
            assertThat(jobs.report("8", other).get(0)).isEqualTo("report:8");
        }
        assertThat(ServerState.holder(LockNames.withNamespace(null).serverName("report:7"))).isEmpty();
    }

    /**
     * Capped at 1 s, extended to 6 s at once: still held 2 s later, and no loss when it returns. The extension must come
     * within the first cap, which ends on the product's clock: one that came after it may have ended proves nothing,
     * and is made again on a lock of its own.
     */
    @Test
    void theMethodExtendsItsCapFromInside() throws Exception {
        LockApp.conclusively("the extension within the first cap", attempt -> {
            long[] extendedAt = new long[1];
            long start = System.nanoTime();
            boolean held;
            try {
                held = jobs.extending(attempt, extendedAt, null);
            } catch (LockLostException e) {
                held = false;
            }
            long answeredAt = extendedAt[0] != 0 ? extendedAt[0] : System.nanoTime();
            if (!held && answeredAt - start >= TimeUnit.SECONDS.toNanos(1)) {
                return false;
            }
            assertThat(held).as("still held past the first cap, and not lost when the method returns").isTrue();
            return true;
        });
    }

    @Test
    void theInterceptorReleasesTheLockNotTheMethod() {
        assertThat(jobs.releasing(null)).contains("released by the interceptor when the method ends");
        assertThat(ServerState.holder(LockNames.withNamespace(null).serverName("releasing"))).isEmpty();
    }

    @Test
    void currentLockIsTheInnermostLockedMethodsOnThisThread() {
        assertThat(locks.currentLock()).isEmpty();
        assertThat(jobs.outer()).containsExactly("outer", "inner", "outer");
        assertThat(locks.currentLock()).isEmpty();
    }

    @Test
    void aUniMethodGetsItsLockToo() {
        assertThat(jobs.token("u1", null).await().atMost(Duration.ofSeconds(10))).isPositive();
    }

    @ApplicationScoped
    public static class Jobs {

        @Inject
        LockManager locks;

        @Inject
        Inner inner;

        @Locked("report:{id}")
        public List<String> report(String id, LockHandle lock) {
            return List.of(lock.name(), Long.toString(lock.fencingToken()), Boolean.toString(lock.isValid()),
                    Boolean.toString(locks.currentLock().map(LockHandle::fencingToken).orElse(-1L) == lock.fencingToken()));
        }

        /** {@code extendedAt[0]}: when the extension answered it was made (left 0 if it threw). */
        @Locked(value = "extending:{0}", atMostFor = "1s")
        public boolean extending(int attempt, long[] extendedAt, LockHandle lock) {
            boolean extended = lock.extend(Duration.ofSeconds(6));
            long start = System.nanoTime();
            extendedAt[0] = start;
            if (!extended) {
                return false;
            }
            LockApp.await("the first cap to pass", Duration.ofSeconds(30),
                    () -> System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(2000));
            return lock.isValid();
        }

        @Locked("releasing")
        public String releasing(LockHandle lock) {
            try {
                lock.release();
                return "released";
            } catch (IllegalStateException e) {
                return lock.isValid() ? e.getMessage() : "invalid";
            }
        }

        @Locked("outer")
        public List<String> outer() {
            List<String> names = new ArrayList<>();
            names.add(name());
            names.add(inner.inner(locks));
            names.add(name());
            return names;
        }

        private String name() {
            return locks.currentLock().map(LockHandle::name).orElse("none");
        }

        @Locked("uni:{id}")
        public Uni<Long> token(String id, LockHandle lock) {
            return Uni.createFrom().item(lock.fencingToken());
        }
    }

    @ApplicationScoped
    public static class Inner {
        @Locked("inner")
        public String inner(LockManager locks) {
            return locks.currentLock().map(LockHandle::name).orElse("none");
        }
    }
}
