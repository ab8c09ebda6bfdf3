package io.quarkiverse.mysqllock.it;

import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;

/**
 * Ends holds ({@link Holds}) from the tests, in this process or over HTTP from another one: a test-application
 * control, as {@code /fault-worker/stop} is, not something an application would expose.
 */
@Path("/holds")
public class HoldResource {

    @Inject
    Holds holds;

    /** Releases the request that holds with {@code until=<token>}, or the one that will: 204. */
    @POST
    @Path("/{token}/release")
    public void release(@PathParam("token") String token) {
        holds.release(token);
    }
}
