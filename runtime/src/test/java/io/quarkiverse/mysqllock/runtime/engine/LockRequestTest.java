package io.quarkiverse.mysqllock.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.engine.LockRequest.Owner;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;

/** What a caller asks an engine for: its defaults, its checks, and changes that keep the rest. */
class LockRequestTest {

    private static final LockName NAME = new LockName("Order:1", "order:1~0123456789abcdef");
    private static final long THREE_SECONDS = TimeUnit.SECONDS.toNanos(3);

    @Test
    void theCommonRequestThrowsWhenBusyAndBelongsToTheCallingThread() {
        LockRequest request = LockRequest.of(NAME, 5);

        assertThat(request).isEqualTo(new LockRequest(NAME, 5, WhenBusy.THROW, Owner.CALLING_THREAD, 0));
        assertThat(request.throwIfBusy()).isTrue();
        assertThat(request.name()).isEqualTo("Order:1");
        assertThat(request.serverName()).isEqualTo("order:1~0123456789abcdef");
        assertThat(request.ownerThread()).isSameAs(Thread.currentThread());
    }

    @Test
    void negativeWaitsAndCapsAreRefusedAndZeroIsOneAttempt() {
        assertThatThrownBy(() -> LockRequest.of(NAME, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("A lock request's wait and atMostFor must not be negative");
        assertThatThrownBy(() -> new LockRequest(NAME, 0, WhenBusy.THROW, Owner.NONE, -1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LockRequest.of(NAME, 0).atMostFor(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(LockRequest.of(NAME, 0).waitNanos()).isZero();
    }

    @Test
    void eachChangeKeepsTheRestAndLeavesTheOriginalAsItWas() {
        LockRequest capped = LockRequest.of(NAME, 7).atMostFor(Duration.ofSeconds(3));
        assertThat(capped).isEqualTo(new LockRequest(NAME, 7, WhenBusy.THROW, Owner.CALLING_THREAD, THREE_SECONDS));

        LockRequest quiet = capped.whenBusy(WhenBusy.NOTHING);
        assertThat(quiet).isEqualTo(new LockRequest(NAME, 7, WhenBusy.NOTHING, Owner.CALLING_THREAD, THREE_SECONDS));
        assertThat(quiet.throwIfBusy()).isFalse();

        LockRequest unowned = quiet.ownedBy(Owner.NONE);
        assertThat(unowned).isEqualTo(new LockRequest(NAME, 7, WhenBusy.NOTHING, Owner.NONE, THREE_SECONDS));
        assertThat(unowned.ownerThread()).as("an asynchronous caller's").isNull();

        assertThat(capped).isEqualTo(new LockRequest(NAME, 7, WhenBusy.THROW, Owner.CALLING_THREAD, THREE_SECONDS));
    }

    @Test
    void theOwnerThreadIsTheThreadThatAsksNotTheOneThatMadeTheRequest() throws Exception {
        LockRequest request = LockRequest.of(NAME, 0);
        CompletableFuture<Thread> seen = new CompletableFuture<>();
        Thread other = new Thread(() -> seen.complete(request.ownerThread()), "lock-request-other");
        other.start();

        assertThat(seen.get(30, TimeUnit.SECONDS)).isSameAs(other);
    }
}
