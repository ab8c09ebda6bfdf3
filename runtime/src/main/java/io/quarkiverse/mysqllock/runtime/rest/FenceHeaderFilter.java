package io.quarkiverse.mysqllock.runtime.rest;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;

import io.quarkiverse.mysqllock.LockFence;
import io.quarkiverse.mysqllock.runtime.fence.IncomingFence;
import io.quarkus.arc.Arc;

/**
 * Reads the {@value LockFence#HEADER} header of a request that has one, for the {@code @Fenced} method that serves it
 * ({@link IncomingFence}). Registered only where an application has {@code @Fenced} methods and Quarkus REST.
 */
public class FenceHeaderFilter implements ContainerRequestFilter {

    @Override
    public void filter(ContainerRequestContext request) {
        String header = request.getHeaderString(LockFence.HEADER);
        if (header == null) {
            return;
        }
        IncomingFence incoming = Arc.container().instance(IncomingFence.class).get();
        try {
            incoming.carried(LockFence.parse(header));
        } catch (IllegalArgumentException e) {
            incoming.malformed(e.getMessage());
        }
    }
}
