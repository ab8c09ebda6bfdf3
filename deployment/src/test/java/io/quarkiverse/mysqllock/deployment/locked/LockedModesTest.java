package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;

/** {@code @Locked(mode = READ | WRITE | PERMIT)}: the read-write lock and the semaphore around a method. */
class LockedModesTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Catalog.class);

    @Inject
    Catalog catalog;
    @Inject
    LockManager locks;

    @ApplicationScoped
    public static class Catalog {

        /** Waits at the barrier inside the read lock: both callers must be inside at once. */
        @Locked(value = "catalog:{id}", mode = Locked.Mode.READ, waitFor = "10s")
        public void read(String id, CyclicBarrier together) throws Exception {
            together.await(30, TimeUnit.SECONDS);
        }

        @Locked(value = "catalog:{id}", mode = Locked.Mode.READ)
        public String readNow(String id) {
            return "read " + id;
        }

        @Locked(value = "catalog:{id}", mode = Locked.Mode.WRITE, waitFor = "10s")
        public void write(String id, CountDownLatch inside, CountDownLatch leave) throws InterruptedException {
            inside.countDown();
            leaveWhenTold(leave);
        }

        @Locked(value = "exports", mode = Locked.Mode.PERMIT, permits = 2, waitFor = "10s")
        public void export(CyclicBarrier together, CountDownLatch leave) throws Exception {
            together.await(30, TimeUnit.SECONDS);
            leaveWhenTold(leave);
        }

        /** A hold of the test's own, ended when the test says: one it never ends fails loudly, never ends by itself. */
        private static void leaveWhenTold(CountDownLatch leave) throws InterruptedException {
            if (!leave.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never let the holder leave");
            }
        }

        @Locked(value = "exports", mode = Locked.Mode.PERMIT, permits = 2)
        public String exportNow() {
            return "exported";
        }

        @Locked(value = "exports", mode = Locked.Mode.PERMIT, permits = 2, onBusy = OnBusy.SKIP)
        public Optional<String> exportOrSkip() {
            return Optional.of("exported");
        }
    }

    @Test
    void readersAreInsideTogether() throws Exception {
        CyclicBarrier together = new CyclicBarrier(2);
        CompletableFuture<Void> first = Background.run(() -> unchecked(() -> catalog.read("1", together)));
        catalog.read("1", together); // times out at the barrier if the first reader kept the second out
        first.get(10, TimeUnit.SECONDS);
        assertThat(locks.held()).isEmpty();
    }

    @Test
    void aWriterKeepsReadersOut() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        CompletableFuture<Void> writer = Background.run(() -> unchecked(() -> catalog.write("2", inside, leave)));
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> catalog.readNow("2")).isInstanceOf(LockNotAcquiredException.class)
                .satisfies(e -> assertThat(((LockNotAcquiredException) e).reason())
                        .isEqualTo(LockNotAcquiredException.Reason.BUSY));
        assertThat(catalog.readNow("3")).as("another name").isEqualTo("read 3");
        leave.countDown();
        writer.get(10, TimeUnit.SECONDS);
        assertThat(catalog.readNow("2")).isEqualTo("read 2");
    }

    @Test
    void permitsAdmitAsManyHoldersAsTheyCount() throws Exception {
        CyclicBarrier together = new CyclicBarrier(3); // both holders and this test
        CountDownLatch leave = new CountDownLatch(1);
        CompletableFuture<Void> first = Background.run(() -> unchecked(() -> catalog.export(together, leave)));
        CompletableFuture<Void> second = Background.run(() -> unchecked(() -> catalog.export(together, leave)));
        together.await(30, TimeUnit.SECONDS);
        // both permits held: a third holder is refused, or skipped
        assertThatThrownBy(catalog::exportNow).isInstanceOf(LockNotAcquiredException.class);
        assertThat(catalog.exportOrSkip()).isEmpty();
        leave.countDown();
        first.get(10, TimeUnit.SECONDS);
        second.get(10, TimeUnit.SECONDS);
        assertThat(catalog.exportNow()).isEqualTo("exported");
        assertThat(catalog.exportOrSkip()).contains("exported");
        assertThat(locks.held()).isEmpty();
    }

    private interface Work {
        void run() throws Exception;
    }

    private static void unchecked(Work work) {
        try {
            work.run();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
