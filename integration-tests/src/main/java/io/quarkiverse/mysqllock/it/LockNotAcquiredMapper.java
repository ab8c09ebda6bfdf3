package io.quarkiverse.mysqllock.it;

import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import io.quarkiverse.mysqllock.LockNotAcquiredException;

/** A lock held by someone else is a conflict with the current state of the resource: 409. */
public class LockNotAcquiredMapper {

    @ServerExceptionMapper
    public Response busy(LockNotAcquiredException e) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("lock", e.lockName());
        body.put("reason", e.reason().name());
        body.put("holder", e.holder().orElse(null));
        body.put("waitedMs", e.waited().toMillis());
        body.put("message", e.getMessage());
        int status = e.reason() == LockNotAcquiredException.Reason.BUSY
                || e.reason() == LockNotAcquiredException.Reason.DEADLOCK ? 409 : 503;
        return Response.status(status).type(MediaType.APPLICATION_JSON).entity(body).build();
    }
}
