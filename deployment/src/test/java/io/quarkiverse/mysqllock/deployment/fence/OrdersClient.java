package io.quarkiverse.mysqllock.deployment.fence;

import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;

import org.eclipse.microprofile.rest.client.annotation.RegisterProvider;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

import io.quarkiverse.mysqllock.runtime.rest.LockFenceClientFilter;

/** Another service's client of the fenced resource: it sends the token of the lock its caller holds. */
@Path("/orders")
@RegisterRestClient(configKey = "orders")
@RegisterProvider(LockFenceClientFilter.class)
public interface OrdersClient {

    @POST
    @Path("{id}")
    String write(@PathParam("id") String id);
}
