package io.quarkiverse.mysqllock.it;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import jakarta.inject.Inject;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockManager;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;

/** LockManager used from REST endpoints, blocking and reactive. */
@Path("/locks")
@Produces(MediaType.APPLICATION_JSON)
public class LockResource {

    @Inject
    LockManager locks;
    @Inject
    Holds holds;

    /** Who holds the lock. */
    @GET
    @Path("/{name}")
    public Response inspect(@PathParam("name") String name) {
        Optional<LockInfo> info = locks.inspect(name);
        return info.map(i -> Response.ok(i).build()).orElseGet(() -> Response.status(404).build());
    }

    /**
     * Holds the lock on a worker thread until the test releases {@code until} ({@link Holds}), and at least
     * {@code holdMs} (without {@code until}: that long, as work would); busy after {@code waitMs} maps to 409.
     */
    @POST
    @Path("/{name}")
    public Map<String, Object> hold(@PathParam("name") String name, @QueryParam("waitMs") @DefaultValue("0") long waitMs,
            @QueryParam("holdMs") @DefaultValue("0") long holdMs, @QueryParam("until") String until)
            throws InterruptedException {
        try (LockHandle handle = locks.acquire(name, Duration.ofMillis(waitMs))) {
            long start = System.nanoTime();
            long fence = handle.fencingToken();
            holds.await(until, start, holdMs);
            return result(name, fence);
        }
    }

    /**
     * Acquires without blocking the event loop; the handle arrives back on the event loop, and the first fencing token
     * of a NAMED lock reads the database, so that part moves to a worker thread.
     */
    @GET
    @Path("/{name}/async")
    public Uni<Map<String, Object>> holdAsync(@PathParam("name") String name,
            @QueryParam("waitMs") @DefaultValue("0") long waitMs) {
        return locks.acquireAsync(name, Duration.ofMillis(waitMs)).emitOn(Infrastructure.getDefaultWorkerPool()).map(handle -> {
            try (handle) {
                return result(name, handle.fencingToken());
            }
        });
    }

    /** Calls the blocking API on the event loop (a Uni-returning endpoint without @Blocking): refused. */
    @GET
    @Path("/{name}/blocking-on-event-loop")
    public Uni<String> blockingOnEventLoop(@PathParam("name") String name) {
        try {
            locks.tryAcquire(name).ifPresent(LockHandle::release);
            return Uni.createFrom().item("blocked the event loop");
        } catch (IllegalStateException e) {
            return Uni.createFrom().item(e.getMessage());
        }
    }

    /** The handle arrives on the event loop; asking it for its first NAMED fencing token there is refused. */
    @GET
    @Path("/{name}/fence-on-event-loop")
    public Uni<String> fenceOnEventLoop(@PathParam("name") String name) {
        return locks.acquireAsync(name, Duration.ZERO).map(handle -> {
            try (handle) {
                return "token " + handle.fencingToken();
            } catch (IllegalStateException e) {
                return e.getMessage();
            }
        });
    }

    private static Map<String, Object> result(String name, long fence) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("lock", name);
        result.put("fencingToken", fence);
        result.put("thread", Thread.currentThread().getName());
        return result;
    }
}
