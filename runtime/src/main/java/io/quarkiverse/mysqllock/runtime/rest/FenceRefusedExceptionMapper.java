package io.quarkiverse.mysqllock.runtime.rest;

import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;

import io.quarkiverse.mysqllock.FenceRefusedException;

/**
 * The REST answer to a refused fence ({@code @Fenced}, {@code FenceGuard}): 409 Conflict for a token older than the
 * newest admitted (its sender lost the lock), 428 Precondition Required for a request without one, 400 Bad Request for a
 * malformed one or one of another lock, 503 with {@code Retry-After: 1} when the database could not check it. The body
 * is JSON: the lock, the reason, the tokens and the message. Registered with Quarkus REST, below
 * {@code Priorities.USER}: an application's own mapper of the exception wins.
 */
public class FenceRefusedExceptionMapper implements ExceptionMapper<FenceRefusedException> {

    @Override
    public Response toResponse(FenceRefusedException e) {
        Response.ResponseBuilder response = switch (e.reason()) {
            case STALE -> Response.status(Response.Status.CONFLICT);
            case MISSING -> Response.status(428);
            case INVALID -> Response.status(Response.Status.BAD_REQUEST);
            case UNAVAILABLE -> Response.status(Response.Status.SERVICE_UNAVAILABLE).header("Retry-After", "1");
        };
        String body = "{\"lock\":" + Json.string(e.lockName()) + ",\"reason\":\"" + e.reason().name() + "\",\"token\":"
                + e.token() + ",\"newest\":" + e.newest() + ",\"message\":" + Json.string(e.getMessage()) + "}";
        return response.type(MediaType.APPLICATION_JSON_TYPE).entity(body).build();
    }
}
