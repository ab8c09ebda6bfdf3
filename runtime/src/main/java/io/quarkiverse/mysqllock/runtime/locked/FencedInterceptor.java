package io.quarkiverse.mysqllock.runtime.locked;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import io.quarkiverse.mysqllock.Fenced;
import io.quarkiverse.mysqllock.LockFence;
import io.quarkiverse.mysqllock.runtime.fence.FenceChecks;
import io.quarkiverse.mysqllock.runtime.fence.IncomingFence;

/**
 * Admits the fence a request carries ({@link IncomingFence}) for a {@link Fenced} method's lock before the method runs,
 * or refuses the request. Inside {@code @Transactional} ({@code PLATFORM_BEFORE + 200}), so that the admission is part of
 * the method's transaction; outside {@code @Locked}, which is unrelated.
 */
@Fenced("")
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_AFTER + 50)
public class FencedInterceptor {

    @Inject
    FencedMethods methods;
    @Inject
    DataSourceManagers managers;

    @AroundInvoke
    Object admit(InvocationContext context) throws Exception {
        FencedMethods.FencedMethod method = methods.of(context.getMethod());
        String lock = method.lock(context.getParameters());
        if (io.vertx.core.Context.isOnEventLoopThread()) {
            throw new IllegalStateException("@Fenced method " + context.getMethod().getDeclaringClass().getName() + "#"
                    + context.getMethod().getName() + "() runs on an event loop, and checking the fence of lock '" + lock
                    + "' blocks on the database: annotate it @Blocking (or @RunOnVirtualThread)");
        }
        IncomingFence incoming = IncomingFence.current();
        if (incoming != null && incoming.problem() != null) {
            throw FenceChecks.malformed(lock, incoming.problem());
        }
        LockFence fence = incoming == null ? null : incoming.fence();
        if (fence == null) {
            throw FenceChecks.missing(lock);
        }
        if (!fence.lock().equals(lock)) {
            throw FenceChecks.otherLock(lock, fence);
        }
        managers.of(method.dataSource()).fenceGuard().admit(fence);
        return context.proceed();
    }
}
