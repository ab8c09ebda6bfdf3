package io.quarkiverse.mysqllock.runtime.locked;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockSkipped;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkus.runtime.BlockingOperationControl;
import io.smallrye.mutiny.Uni;

/**
 * Holds the lock of a {@link Locked} method around its invocation, or around its asynchronous result.
 * <p>
 * Its priority puts it inside SmallRye Fault Tolerance ({@code PLATFORM_AFTER + 10}), so that {@code @Retry},
 * {@code @Timeout} and {@code @Fallback} see {@code LockNotAcquiredException}, and inside {@code @Transactional}.
 */
@Locked
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_AFTER + 100)
public class LockedInterceptor {

    private static final Logger LOG = Logger.getLogger(LockedInterceptor.class);

    @Inject
    MySqlLockManager locks;

    @Inject
    LateReleases lateReleases;

    @Inject
    Event<LockSkipped> skips;

    @AroundInvoke
    Object lock(InvocationContext context) throws Exception {
        LockedMethod method = LockedMethods.of(context.getMethod());
        String name = method.lockName(context.getParameters());
        return switch (method.kind) {
            case UNI -> lockUni(context, method, name);
            case COMPLETION_STAGE -> lockCompletionStage(context, method, name);
            default -> lockBlocking(context, method, name);
        };
    }

    private Object lockBlocking(InvocationContext context, LockedMethod method, String name) throws Exception {
        if (!BlockingOperationControl.isBlockingAllowed()) {
            throw new IllegalStateException(method.description + " is @Locked and blocks while it acquires its lock,"
                    + " but it was called on an event-loop thread. Return Uni or CompletionStage from it, or run it on a"
                    + " worker thread (@Blocking)");
        }
        long start = System.nanoTime();
        LockHandle handle = method.tickParameter < 0
                ? locks.acquire(name, method.wait, method.atMostFor, method.onBusy == OnBusy.FAIL)
                : locks.acquireTick(name, method.wait, method.atMostFor, method.tick(context.getParameters()));
        if (handle == null) {
            skipped(method, name);
            return method.kind == ReturnKind.OPTIONAL ? Optional.empty() : null;
        }
        try {
            return context.proceed();
        } finally {
            release(handle, method, start);
        }
    }

    private Object lockUni(InvocationContext context, LockedMethod method, String name) {
        return Uni.createFrom().deferred(() -> {
            long start = System.nanoTime();
            return acquireAsync(context, method, name)
                    .onFailure(failure -> skips(method, failure)).recoverWithNull()
                    .onItem().transformToUni(handle -> {
                        if (handle == null) {
                            skipped(method, name);
                            return Uni.createFrom().nullItem();
                        }
                        Uni<?> result;
                        try {
                            result = (Uni<?>) context.proceed();
                        } catch (Exception e) {
                            release(handle, method, start);
                            return Uni.createFrom().failure(e);
                        }
                        return result.onTermination().invoke(() -> release(handle, method, start));
                    });
        });
    }

    private Object lockCompletionStage(InvocationContext context, LockedMethod method, String name) {
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        long start = System.nanoTime();
        acquireAsync(context, method, name).subscribe().with(handle -> {
            if (handle == null) {
                skipped(method, name);
                outcome.complete(null);
                return;
            }
            CompletionStage<?> stage;
            try {
                stage = (CompletionStage<?>) context.proceed();
            } catch (Exception e) {
                release(handle, method, start);
                outcome.completeExceptionally(e);
                return;
            }
            stage.whenComplete((value, failure) -> {
                release(handle, method, start);
                if (failure != null) {
                    outcome.completeExceptionally(failure);
                } else {
                    outcome.complete(value);
                }
            });
        }, failure -> {
            if (skips(method, failure)) {
                skipped(method, name);
                outcome.complete(null);
            } else {
                outcome.completeExceptionally(failure);
            }
        });
        return outcome;
    }

    /** The lock, or a null item when the tick of a scheduled method already ran elsewhere. */
    private Uni<LockHandle> acquireAsync(InvocationContext context, LockedMethod method, String name) {
        return method.tickParameter < 0 ? locks.acquireAsync(name, method.wait, method.atMostFor)
                : locks.acquireTickAsync(name, method.wait, method.atMostFor, method.tick(context.getParameters()));
    }

    private static boolean skips(LockedMethod method, Throwable failure) {
        return method.onBusy == OnBusy.SKIP && failure instanceof LockNotAcquiredException notAcquired
                && notAcquired.reason() == LockNotAcquiredException.Reason.BUSY;
    }

    private void skipped(LockedMethod method, String name) {
        LOG.debugf("Skipped %s: lock '%s' is held elsewhere%s", method.description, name,
                method.tickParameter < 0 ? "" : ", or this tick already ran");
        skips.fire(new LockSkipped(name, method.key));
    }

    /** Releases now, or once {@code atLeastFor} has passed since the method started, without holding any thread. */
    private void release(LockHandle handle, LockedMethod method, long start) {
        long remaining = method.atLeastFor.toNanos() - (System.nanoTime() - start);
        if (remaining <= 0) {
            handle.release();
        } else {
            lateReleases.releaseIn(handle, remaining);
        }
    }
}
