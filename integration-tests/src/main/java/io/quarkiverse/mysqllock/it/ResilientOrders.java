package io.quarkiverse.mysqllock.it;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.faulttolerance.Fallback;
import org.eclipse.microprofile.faulttolerance.Retry;
import org.eclipse.microprofile.faulttolerance.Timeout;

import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.Locked;
import io.smallrye.mutiny.Uni;

/**
 * {@code @Locked} with SmallRye Fault Tolerance. Fault Tolerance's interceptor runs outside {@code @Locked}'s, so
 * {@code @Retry} retries the acquisition and {@code @Fallback} handles a busy lock. {@code @Timeout} does not cancel
 * the work it times out (for {@code Uni} and {@code CompletionStage} Fault Tolerance abandons the result): bound the
 * lock wait with {@code waitFor}, shorter than the timeout, and the lock is still released when the body ends.
 */
@ApplicationScoped
public class ResilientOrders {

    private final AtomicInteger runs = new AtomicInteger();

    @Retry(maxRetries = 50, delay = 50, jitter = 20, retryOn = LockNotAcquiredException.class)
    @Locked("resilient:{id}")
    public String retried(String id) {
        runs.incrementAndGet();
        return "shipped " + id;
    }

    @Fallback(fallbackMethod = "later")
    @Locked("resilient:{id}")
    public String withFallback(String id) {
        runs.incrementAndGet();
        return "shipped " + id;
    }

    String later(String id) {
        return "busy, try " + id + " later";
    }

    @Timeout(2000)
    @Locked(value = "resilient:{id}", waitFor = "200ms")
    public Uni<String> waitShorterThanTimeout(String id) {
        runs.incrementAndGet();
        return Uni.createFrom().item("shipped " + id);
    }

    @Timeout(300)
    @Locked("resilient:{id}")
    public Uni<String> slowBody(String id) {
        runs.incrementAndGet();
        return Uni.createFrom().item("shipped " + id).onItem().delayIt().by(Duration.ofSeconds(1));
    }

    public int runs() {
        return runs.get();
    }
}
