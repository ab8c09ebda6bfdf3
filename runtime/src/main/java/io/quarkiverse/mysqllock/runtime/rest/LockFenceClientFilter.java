package io.quarkiverse.mysqllock.runtime.rest;

import java.util.Optional;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;

import io.quarkiverse.mysqllock.LockFence;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManagerFactory;

/**
 * A REST Client filter that sends the fencing token of the {@code @Locked} method the calling thread is in (the
 * innermost one: {@link io.quarkiverse.mysqllock.LockManager#currentLock()}, of any datasource) in the
 * {@value LockFence#HEADER} header, for a {@code @Fenced} resource of another service to check. Register it on a client
 * interface: {@code @RegisterProvider(LockFenceClientFilter.class)}. For blocking calls made from the method itself: a
 * {@code Uni} call sends its request once subscribed, which may be after the method returned. A call made outside a
 * {@code @Locked} method goes without the header (a fenced resource refuses it: 428); one that already has the header
 * keeps its own (a lock taken with {@code acquire}: {@code LockFence.of(handle).headerValue()}). It runs before the
 * authentication filters, which may go on on another thread.
 */
@Priority(Priorities.AUTHENTICATION - 100)
public class LockFenceClientFilter implements ClientRequestFilter {

    @Override
    public void filter(ClientRequestContext request) {
        if (request.getHeaders().containsKey(LockFence.HEADER)) {
            return;
        }
        for (MySqlLockManager manager : MySqlLockManagerFactory.created()) {
            Optional<LockFence> fence = LockFence.current(manager);
            if (fence.isPresent()) {
                request.getHeaders().putSingle(LockFence.HEADER, fence.get().headerValue());
                return;
            }
        }
    }
}
