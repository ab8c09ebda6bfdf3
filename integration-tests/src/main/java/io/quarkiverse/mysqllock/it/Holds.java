package io.quarkiverse.mysqllock.it;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import jakarta.inject.Singleton;

import io.smallrye.mutiny.Uni;

/**
 * Holds that end when the test says so ({@code POST /holds/<token>/release}, see {@link HoldResource}), never on a
 * clock: a hold that a test relies on while it asks questions must not end because a busy machine made the questions
 * slow. The endpoints that hold a lock take the token as {@code until=<token>}; their {@code holdMs} is only a
 * minimum (a test that asserts hold-time metrics needs one).
 */
@Singleton
public class Holds {

    /**
     * The longest a hold waits for its release: a test that never releases fails loudly (HTTP 500) instead of hanging
     * the suite. Kept under the JTA default transaction timeout (60 s,
     * {@code quarkus.transaction-manager.default-transaction-timeout}), which {@link TransactionLockResource} holds
     * inside: its transaction must still be alive to end with a 200.
     */
    static final Duration CAP = Duration.ofSeconds(50);

    /**
     * Each token's release, made by whichever comes first, its hold or its release; removed by its hold when that
     * ends. A concurrent map: the holders and the release requests are on different threads.
     */
    private final ConcurrentMap<String, CompletableFuture<Void>> releases = new ConcurrentHashMap<>();

    /** Ends the hold of that token; a release that comes before its hold began is kept for it, never lost. */
    void release(String token) {
        of(token).complete(null);
    }

    /**
     * Blocks the caller until the token is released (no token: not at all), then until at least {@code minMillis}
     * after {@code startNanos} ({@link System#nanoTime()}) have passed.
     *
     * @throws IllegalStateException when the release did not come within {@link #CAP}
     */
    void await(String token, long startNanos, long minMillis) throws InterruptedException {
        await(token, startNanos, minMillis, System.nanoTime());
    }

    /**
     * The same, with the {@link #CAP} counted from {@code capFromNanos}: a hold inside a transaction counts it from the
     * transaction's start, so that the time spent waiting for the lock does not take the hold past the transaction
     * timeout.
     */
    void await(String token, long startNanos, long minMillis, long capFromNanos) throws InterruptedException {
        if (token != null) {
            CompletableFuture<Void> released = of(token);
            try {
                released.get(CAP.toNanos() - (System.nanoTime() - capFromNanos), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw neverReleased(token);
            } catch (ExecutionException e) {
                throw new IllegalStateException("Hold '" + token + "' failed", e.getCause());
            } finally {
                releases.remove(token, released);
            }
        }
        long left = TimeUnit.MILLISECONDS.toNanos(minMillis) - (System.nanoTime() - startNanos);
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    /**
     * The same for a reactive holder, without blocking its thread: an item when the token is released (no token: at
     * once) and at least {@code minMillis} after the subscription; a failure after {@link #CAP} without a release.
     */
    Uni<Void> released(String token, long minMillis) {
        return Uni.createFrom().deferred(() -> {
            long start = System.nanoTime();
            return untilReleased(token).onItem().call(() -> {
                long left = TimeUnit.MILLISECONDS.toNanos(minMillis) - (System.nanoTime() - start);
                return left > 0 ? Uni.createFrom().voidItem().onItem().delayIt().by(Duration.ofNanos(left))
                        : Uni.createFrom().voidItem();
            });
        });
    }

    private Uni<Void> untilReleased(String token) {
        if (token == null) {
            return Uni.createFrom().voidItem();
        }
        CompletableFuture<Void> released = of(token);
        // a copy: a cancelled or timed-out subscription cancels its own future, never the registered one
        return Uni.createFrom().completionStage(released.copy())
                .ifNoItem().after(CAP).failWith(() -> neverReleased(token))
                .onTermination().invoke(() -> releases.remove(token, released));
    }

    private CompletableFuture<Void> of(String token) {
        return releases.computeIfAbsent(token, t -> new CompletableFuture<>());
    }

    private static IllegalStateException neverReleased(String token) {
        return new IllegalStateException("Hold '" + token + "' was not released within " + CAP.toSeconds()
                + " s: the test never called POST /holds/" + token + "/release");
    }
}
