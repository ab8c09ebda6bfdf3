package io.quarkiverse.mysqllock.runtime.rest;

import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

import io.quarkiverse.mysqllock.LockNotAcquiredException;

/**
 * The opt-in REST answer to a lock that could not be taken ({@code quarkus.mysql-lock.rest.map-exceptions=true}, only
 * with {@code quarkus-rest}): {@code BUSY} and {@code DEADLOCK} are 409 Conflict (someone else is changing the resource;
 * the holder's remaining time is unknown, so no {@code Retry-After}); {@code POOL_EXHAUSTED} is 503 with
 * {@code Retry-After: 1} (a connection frees up soon); {@code DATABASE_ERROR} and {@code READ_ONLY} are 503 with
 * {@code Retry-After: 5} (a restart or a failover takes seconds); {@code INTERRUPTED} is 503 without {@code Retry-After}
 * (the request's own thread was interrupted: a time-out, a shutdown). The body is JSON: the lock, the reason and the time
 * waited; never the holder, which names a host and a process. An application's own mapper of the exception wins (this one is
 * registered at priority
 * 6000, below {@code Priorities.USER}).
 */
public class LockNotAcquiredExceptionMapper implements ExceptionMapper<LockNotAcquiredException> {

    @Override
    public Response toResponse(LockNotAcquiredException e) {
        Response.ResponseBuilder response = switch (e.reason()) {
            case BUSY, DEADLOCK -> Response.status(Response.Status.CONFLICT);
            case POOL_EXHAUSTED -> Response.status(Response.Status.SERVICE_UNAVAILABLE).header("Retry-After", "1");
            case DATABASE_ERROR, READ_ONLY -> Response.status(Response.Status.SERVICE_UNAVAILABLE).header("Retry-After",
                    "5");
            case INTERRUPTED -> Response.status(Response.Status.SERVICE_UNAVAILABLE);
        };
        String body = "{\"lock\":" + Json.string(e.lockName()) + ",\"reason\":\"" + e.reason().name() + "\",\"waitedMs\":"
                + e.waited().toMillis() + "}";
        return response.type(MediaType.APPLICATION_JSON_TYPE).entity(body).build();
    }
}
