package io.quarkiverse.mysqllock.it;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkus.agroal.DataSource;

/** Locks in a datasource chosen by name: the lock manager of each datasource is {@code @DataSource("name")}. */
@Path("/datasources/{datasource}/locks")
@Produces(MediaType.APPLICATION_JSON)
public class DataSourceLockResource {

    @Inject
    @Any
    Instance<LockManager> managers;

    /** Takes and releases the lock in that datasource; its engine and fencing token. */
    @POST
    @Path("/{name}")
    public Map<String, Object> take(@PathParam("datasource") String datasource, @PathParam("name") String name) {
        LockManager locks = manager(datasource);
        try (LockHandle handle = locks.acquire(name, Duration.ofSeconds(5))) {
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("datasource", datasource);
            result.put("engine", locks.mode().name());
            result.put("fence", handle.fencingToken());
            return result;
        }
    }

    private LockManager manager(String datasource) {
        Instance<LockManager> selected = managers.select(new DataSource.DataSourceLiteral(datasource));
        if (!selected.isResolvable()) {
            throw new NotFoundException("No lock manager for datasource '" + datasource + "'");
        }
        return selected.get();
    }
}
