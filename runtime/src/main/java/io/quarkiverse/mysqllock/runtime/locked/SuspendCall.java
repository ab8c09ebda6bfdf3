package io.quarkiverse.mysqllock.runtime.locked;

import jakarta.interceptor.InvocationContext;

import io.quarkiverse.mysqllock.runtime.features.MethodLock;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import kotlin.ResultKt;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.ContinuationInterceptor;
import kotlin.coroutines.CoroutineContext;
import kotlin.coroutines.SafeContinuation;
import kotlin.coroutines.intrinsics.IntrinsicsKt;

/**
 * A call of a Kotlin {@code suspend} function, as the interceptor sees it: a method whose last parameter is the caller's
 * continuation, which returns {@code COROUTINE_SUSPENDED} at its first suspension and later completes that
 * continuation. The interceptor makes the call a {@code Uni} (run under the lock as a {@code Uni} method's is), suspends
 * the caller meanwhile, and resumes it, through the caller's dispatcher, with the outcome once the lock is released.
 * <p>
 * Loaded by name ({@link Suspending}) for applications with such methods only, so Kotlin is needed only by them.
 */
public final class SuspendCall implements Suspending {

    public SuspendCall() {
    }

    /**
     * The method's run as a {@code Uni}: at subscription, the method starts on the caller's dispatcher with a
     * continuation of its own, which emits its outcome; one that returns without suspending emits at once.
     */
    @Override
    @SuppressWarnings("unchecked")
    public Uni<Object> run(InvocationContext context, MethodLock lock) {
        Object[] arguments = context.getParameters();
        int last = arguments.length - 1;
        Continuation<Object> caller = (Continuation<Object>) arguments[last];
        return Uni.createFrom().emitter(emitter -> dispatch(caller.getContext(), () -> {
            arguments[last] = new Emitting(caller.getContext(), emitter);
            context.setParameters(arguments);
            // the lock is current until the body's first suspension (the body may keep currentLock()'s handle)
            MethodLock previous = lock.enter();
            try {
                Object result = context.proceed();
                if (result != IntrinsicsKt.getCOROUTINE_SUSPENDED()) {
                    emitter.complete(result);
                }
            } catch (Throwable failure) {
                emitter.fail(failure);
            } finally {
                MethodLock.restore(previous);
            }
        }));
    }

    /**
     * Suspends the caller until {@code outcome} ends, then resumes it through its dispatcher with the item (for a skipped
     * method, a null item: {@code Unit} where the method returns it, null otherwise) or the failure; answered at once
     * when it ended before this returns (as {@code suspendCoroutine} does).
     */
    @Override
    @SuppressWarnings("unchecked")
    public Object suspendUntil(Object caller, Uni<?> outcome, boolean returnsUnit) {
        SafeContinuation<Object> resumed = new SafeContinuation<>(IntrinsicsKt.intercepted((Continuation<Object>) caller));
        outcome.subscribe().with(item -> resumed.resumeWith(item == null && returnsUnit ? Unit.INSTANCE : item),
                failure -> resumed.resumeWith(ResultKt.createFailure(failure)));
        return resumed.getOrThrow();
    }

    /** Runs {@code work} through the dispatcher of a coroutine context (at once where it has none). */
    private static void dispatch(CoroutineContext context, Runnable work) {
        Continuation<Unit> start = new Continuation<>() {
            @Override
            public CoroutineContext getContext() {
                return context;
            }

            @Override
            public void resumeWith(Object ignored) {
                work.run();
            }
        };
        ContinuationInterceptor interceptor = (ContinuationInterceptor) context.get(ContinuationInterceptor.Key);
        (interceptor == null ? start : interceptor.interceptContinuation(start)).resumeWith(Unit.INSTANCE);
    }

    /** The method's completion: it emits the method's result or failure. */
    private static final class Emitting implements Continuation<Object> {
        private final CoroutineContext context;
        private final UniEmitter<? super Object> emitter;

        Emitting(CoroutineContext context, UniEmitter<? super Object> emitter) {
            this.context = context;
            this.emitter = emitter;
        }

        @Override
        public CoroutineContext getContext() {
            return context;
        }

        @Override
        public void resumeWith(Object result) {
            if (result instanceof kotlin.Result.Failure failure) {
                emitter.fail(failure.exception);
            } else {
                emitter.complete(result);
            }
        }
    }
}
