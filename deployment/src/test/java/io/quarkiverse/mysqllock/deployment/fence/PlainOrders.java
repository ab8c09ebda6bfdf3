package io.quarkiverse.mysqllock.deployment.fence;

import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;

import io.quarkiverse.mysqllock.Fenced;

/** A fenced resource that writes nothing: for an application without a datasource (in-memory locks). */
@Path("/plain-orders")
public class PlainOrders {

    @POST
    @Path("{id}")
    @Fenced("order:{id}")
    public String write(@PathParam("id") String id) {
        return "plain";
    }
}
