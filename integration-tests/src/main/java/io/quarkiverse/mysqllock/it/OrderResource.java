package io.quarkiverse.mysqllock.it;

import java.util.Map;

import jakarta.inject.Inject;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import io.quarkiverse.mysqllock.Locked;
import io.smallrye.mutiny.Uni;

/**
 * A per-order critical section on REST endpoints: {@code @Locked} with the order id from the path. A busy order is
 * HTTP 409 (see {@link LockNotAcquiredMapper}).
 */
@Path("/orders/{id}")
@Produces(MediaType.APPLICATION_JSON)
public class OrderResource {

    @Inject
    Holds holds;

    /**
     * Blocking: runs on a worker thread while holding {@code order:<id>}, until the test releases {@code until}
     * ({@link Holds}) and at least {@code holdMs}.
     */
    @POST
    @Path("/ship")
    @Locked("order:{id}")
    public Map<String, Object> ship(@PathParam("id") String id, @QueryParam("holdMs") @DefaultValue("0") long holdMs,
            @QueryParam("until") String until) throws InterruptedException {
        holds.await(until, System.nanoTime(), holdMs);
        return Map.of("order", id, "thread", Thread.currentThread().getName());
    }

    /**
     * Reactive: the lock is taken without blocking the event loop and held until the Uni completes, which is when the
     * test releases {@code until} and at least {@code holdMs} later; nothing waits on a thread meanwhile.
     */
    @POST
    @Path("/ship-reactive")
    @Locked("order:{id}")
    public Uni<Map<String, Object>> shipReactive(@PathParam("id") String id,
            @QueryParam("holdMs") @DefaultValue("0") long holdMs, @QueryParam("until") String until) {
        String thread = Thread.currentThread().getName();
        Uni<Map<String, Object>> shipped = Uni.createFrom().item(() -> Map.of("order", id, "thread", thread));
        return until == null && holdMs == 0 ? shipped : holds.released(until, holdMs).replaceWith(shipped);
    }
}
