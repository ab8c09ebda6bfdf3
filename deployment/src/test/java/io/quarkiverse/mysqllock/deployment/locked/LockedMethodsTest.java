package io.quarkiverse.mysqllock.deployment.locked;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.ServerState;
import io.quarkiverse.mysqllock.runtime.LockNames;
import io.quarkiverse.mysqllock.test.Background;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;

class LockedMethodsTest {

    @RegisterExtension
    static final QuarkusUnitTest app = LockApp.app(Orders.class, Order.class, Customer.class, Nightly.class);

    @Inject
    Orders orders;

    @Inject
    Nightly nightly;

    @Inject
    LockManager locks;

    @Test
    void theLockIsHeldWhileTheMethodRunsUnderTheNameOfItsArguments() {
        String seen = orders.process(new Order("1001", new Customer("acme")), () -> ServerState.holder("order:1001")
                .map(id -> "held").orElse("free"));
        assertThat(seen).isEqualTo("held");
        assertThat(ServerState.holder("order:1001")).isEmpty();
        assertThat(orders.byCustomer(new Order("7", new Customer("acme")), () -> ServerState.holder("customer:acme/7")
                .isPresent())).isTrue();
        assertThat(orders.byPosition("x", 42, () -> ServerState.holder("pos:x-42").isPresent())).isTrue();
        // a null anywhere in the chain is the text "null", not an exception
        assertThat(orders.byCustomer(new Order("8", null), () -> ServerState.holder("customer:null/8").isPresent()))
                .isTrue();
    }

    @Test
    void theDefaultNameIsTheClassAndMethod() {
        String serverName = LockNames.withNamespace(null).serverName(Nightly.class.getName() + "#report");
        assertThat(nightly.report(() -> ServerState.holder(serverName).isPresent())).isTrue();
        assertThat(ServerState.holder(serverName)).isEmpty();
    }

    @Test
    void callsWithTheSameKeySerializeAndWithDifferentKeysRunTogether() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        CompletableFuture<String> first = Background.supply(
                () -> orders.process(new Order("1", null), () -> {
                    inside.countDown();
                    await(leave);
                    return "first";
                }));
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        // another key runs while "order:1" is held
        assertThat(Background.supply(() -> orders.process(new Order("2", null), () -> "other")).get(10,
                TimeUnit.SECONDS)).isEqualTo("other");
        // the same key waits (waitFor = 10s) until the first call returns
        CompletableFuture<String> second = Background.supply(() -> orders.process(new Order("1", null),
                () -> "second"));
        LockApp.await("the second call to wait on the server", Duration.ofSeconds(30),
                () -> ServerState.waitingInGetLock() > 0);
        assertThat(second).isNotDone();
        leave.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("second");
    }

    @Test
    void failAndSkipWhenBusy() throws Exception {
        try (LockHandle held = Background.supply(() -> locks.acquire("order:busy", Duration.ZERO)).get()) {
            assertThatThrownBy(() -> orders.failFast("busy")).isInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("order:busy");
            assertThat(orders.skipOptional("busy")).isEmpty();
            assertThat(orders.skipValue("busy")).isNull();
            int runs = orders.voidRuns();
            orders.skipVoid("busy");
            assertThat(orders.voidRuns()).as("a skipped void method does not run").isEqualTo(runs);
            assertThat(orders.skipUni("busy").await().atMost(Duration.ofSeconds(10))).isNull();
            assertThat(orders.skipStage("busy").toCompletableFuture().get(10, TimeUnit.SECONDS)).isNull();
        }
        assertThat(orders.skipOptional("busy")).contains("ran");
        assertThat(orders.skipValue("busy")).isEqualTo("ran");
        int runs = orders.voidRuns();
        orders.skipVoid("busy");
        assertThat(orders.voidRuns()).isEqualTo(runs + 1);
    }

    @Test
    void exceptionsPassThroughUnchangedAndTheLockIsReleased() {
        IllegalArgumentException thrown = new IllegalArgumentException("bad order");
        assertThatThrownBy(() -> orders.process(new Order("err", null), () -> {
            throw thrown;
        })).isSameAs(thrown);
        assertThat(ServerState.holder("order:err")).isEmpty();
        assertThatThrownBy(() -> orders.checked("err")).isInstanceOf(java.io.IOException.class).hasMessage("checked");
        assertThat(ServerState.holder("order:err")).isEmpty();
    }

    @Test
    void aUniHoldsTheLockFromSubscriptionToTermination() throws Exception {
        CompletableFuture<String> gate = new CompletableFuture<>();
        Uni<String> uni = orders.async("u1", gate);
        assertThat(ServerState.holder("async:u1")).as("nothing before subscription").isEmpty();
        CompletableFuture<String> result = uni.subscribeAsCompletionStage();
        LockApp.await("the lock to be taken", Duration.ofSeconds(30), () -> ServerState.holder("async:u1").isPresent());
        gate.complete("done");
        assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
        LockApp.await("the lock to be released", Duration.ofSeconds(30), () -> ServerState.holder("async:u1").isEmpty());
    }

    @Test
    void cancellingAUniReleasesTheLock() {
        Cancellable subscription = orders.async("u2", new CompletableFuture<>()).subscribe().with(item -> {
        });
        LockApp.await("the lock to be taken", Duration.ofSeconds(30), () -> ServerState.holder("async:u2").isPresent());
        subscription.cancel();
        LockApp.await("the lock to be released", Duration.ofSeconds(30), () -> ServerState.holder("async:u2").isEmpty());
    }

    /**
     * A cancellation that comes while the method itself runs (it builds its Uni): the lock is released once the method
     * returned, not under it. Before, Mutiny's
     * operators had already passed the handle on and no longer heard of the cancellation, and the method's Uni was
     * subscribed after it, never cancelled: the lock stayed held for good (found as a flaky failure of the test above).
     */
    @Test
    void cancellingAUniWhileItsMethodRunsReleasesTheLock() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        Cancellable subscription = orders.slowlyBuilt("u3", entered, proceed).subscribe().with(item -> {
        });
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        subscription.cancel();
        assertThat(ServerState.holder("async:u3")).as("held while the method still runs").isPresent();
        proceed.countDown();
        LockApp.await("the lock to be released", Duration.ofSeconds(10), () -> ServerState.holder("async:u3").isEmpty());
    }

    @Test
    void aCompletionStageHoldsTheLockUntilItCompletes() throws Exception {
        CompletableFuture<String> gate = new CompletableFuture<>();
        CompletionStage<String> stage = orders.stage("s1", gate);
        LockApp.await("the lock to be taken", Duration.ofSeconds(30), () -> ServerState.holder("stage:s1").isPresent());
        assertThat(stage.toCompletableFuture()).isNotDone();
        gate.complete("done");
        assertThat(stage.toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo("done");
        LockApp.await("the lock to be released", Duration.ofSeconds(30), () -> ServerState.holder("stage:s1").isEmpty());
    }

    /**
     * {@code atLeastFor = "5s"}: long enough that the checks after the return (a connection and a thread of their own)
     * land inside the keep on a busy machine (600 ms did not), and that a caller held for the keep, the defect, shows
     * as a return seconds late rather than one a busy machine could make.
     */
    @Test
    void atLeastForKeepsTheLockAfterAQuickMethodWithoutHoldingTheCaller() throws Exception {
        long start = System.nanoTime();
        nightly.quick();
        long returnedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(returnedAfter).as("returned without waiting for atLeastFor").isLessThan(2500);
        assertThat(ServerState.holder("nightly:quick")).as("still held after the method returned").isPresent();
        assertThat(LockApp.otherThreadAcquires(locks, "nightly:quick")).isFalse();
        LockApp.await("the release after atLeastFor", Duration.ofSeconds(30),
                () -> ServerState.holder("nightly:quick").isEmpty());
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(5000);
    }

    @Test
    void aClassLevelAnnotationLocksEveryMethod() {
        String serverName = LockNames.withNamespace(null).serverName(Nightly.class.getName() + "#report");
        assertThat(nightly.report(() -> ServerState.holder(serverName).isPresent())).isTrue();
    }

    /** A hold of the test's own, ended when the test says: one it never ends fails loudly, never ends by itself. */
    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) {
                throw new AssertionError("the test never let the holder go");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public record Customer(String name) {
    }

    public static class Order {
        public final String id;
        private final Customer customer;

        public Order(String id, Customer customer) {
            this.id = id;
            this.customer = customer;
        }

        public Customer getCustomer() {
            return customer;
        }
    }

    @ApplicationScoped
    public static class Orders {
        final AtomicInteger skippedVoidRuns = new AtomicInteger();

        @Locked(value = "order:{order.id}", waitFor = "10s")
        public <T> T process(Order order, java.util.function.Supplier<T> work) {
            return work.get();
        }

        @Locked("customer:{order.customer.name}/{order.id}")
        public boolean byCustomer(Order order, java.util.function.BooleanSupplier check) {
            return check.getAsBoolean();
        }

        @Locked("pos:{0}-{1}")
        public boolean byPosition(String a, int b, java.util.function.BooleanSupplier check) {
            return check.getAsBoolean();
        }

        @Locked("order:{id}")
        public void failFast(String id) {
        }

        @Locked(value = "order:{id}", onBusy = OnBusy.SKIP)
        public Optional<String> skipOptional(String id) {
            return Optional.of("ran");
        }

        @Locked(value = "order:{id}", onBusy = OnBusy.SKIP)
        public String skipValue(String id) {
            return "ran";
        }

        @Locked(value = "order:{id}", onBusy = OnBusy.SKIP)
        public void skipVoid(String id) {
            skippedVoidRuns.incrementAndGet();
        }

        public int voidRuns() {
            return skippedVoidRuns.get();
        }

        @Locked(value = "order:{id}", onBusy = OnBusy.SKIP)
        public Uni<String> skipUni(String id) {
            return Uni.createFrom().item("ran");
        }

        @Locked(value = "order:{id}", onBusy = OnBusy.SKIP)
        public CompletionStage<String> skipStage(String id) {
            return CompletableFuture.completedFuture("ran");
        }

        @Locked("order:{id}")
        public void checked(String id) throws java.io.IOException {
            throw new java.io.IOException("checked");
        }

        @Locked("async:{id}")
        public Uni<String> async(String id, CompletableFuture<String> gate) {
            return Uni.createFrom().completionStage(gate);
        }

        @Locked("async:{id}")
        public Uni<String> slowlyBuilt(String id, CountDownLatch entered, CountDownLatch proceed) {
            entered.countDown();
            try {
                if (!proceed.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never let the method return");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Uni.createFrom().completionStage(new CompletableFuture<String>());
        }

        @Locked("stage:{id}")
        public CompletionStage<String> stage(String id, CompletableFuture<String> gate) {
            return gate;
        }
    }

    @ApplicationScoped
    @Locked
    public static class Nightly {
        public boolean report(java.util.function.BooleanSupplier check) {
            return check.getAsBoolean();
        }

        @Locked(value = "nightly:quick", atLeastFor = "5s")
        public void quick() {
        }
    }
}
