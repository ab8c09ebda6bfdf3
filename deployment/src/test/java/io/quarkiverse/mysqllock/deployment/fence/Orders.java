package io.quarkiverse.mysqllock.deployment.fence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.Fenced;
import io.quarkiverse.mysqllock.LockFence;

/**
 * A service's fenced resource: each accepted request writes a row in {@code fenced_orders} in its transaction; a request
 * with {@code gate} waits inside, after its admission and its write, until the test opens the gate.
 */
@Path("/orders")
public class Orders {

    static final String TABLE = "fenced_orders";
    /** Counted down once the gated request is inside the method. */
    static final Map<String, CountDownLatch> INSIDE = new ConcurrentHashMap<>();
    /** Opened by the test to let the gated request return (and commit). */
    static final Map<String, CountDownLatch> GATES = new ConcurrentHashMap<>();

    @Inject
    AgroalDataSource dataSource;

    static void gate(String name) {
        INSIDE.put(name, new CountDownLatch(1));
        GATES.put(name, new CountDownLatch(1));
    }

    @POST
    @Path("{id}")
    @Transactional
    @Fenced("order:{id}")
    public String write(@PathParam("id") String id, @HeaderParam(LockFence.HEADER) String fence,
            @QueryParam("gate") String gate) throws SQLException, InterruptedException {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement insert = connection
                        .prepareStatement("INSERT INTO " + TABLE + " (order_id, token) VALUES (?, ?)")) {
            insert.setString(1, id);
            insert.setLong(2, LockFence.parse(fence).token());
            insert.executeUpdate();
        }
        if (gate != null) {
            INSIDE.get(gate).countDown();
            if (!GATES.get(gate).await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never opened gate " + gate);
            }
        }
        return "written";
    }

    /** Admitted, then fails: its transaction rolls back, the admission with it. */
    @POST
    @Path("{id}/failing")
    @Transactional
    @Fenced("order:{id}")
    public String failing(@PathParam("id") String id) {
        throw new IllegalStateException("the work failed after its admission");
    }

    /** Not transactional: the fence is checked as the request comes in. */
    @POST
    @Path("{id}/plain")
    @Fenced("order:{id}")
    public String plain(@PathParam("id") String id) {
        return "plain";
    }
}
