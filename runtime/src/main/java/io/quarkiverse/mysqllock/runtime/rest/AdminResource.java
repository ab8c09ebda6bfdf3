package io.quarkiverse.mysqllock.runtime.rest;

import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.jobs.FleetJobs;
import io.quarkiverse.mysqllock.jobs.JobChange;
import io.quarkiverse.mysqllock.jobs.JobInfo;
import io.quarkiverse.mysqllock.jobs.JobRun;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.MySqlLockManagerFactory;
import io.quarkus.arc.Arc;
import io.smallrye.common.annotation.Blocking;

/**
 * The admin resource ({@code quarkus.mysql-lock.admin.enabled=true}, off by default): the fleet's scheduled jobs, their
 * history and changes, pause, resume, disable, enable and run-now; the lock holders, and a lock released by force. Every
 * call needs the role {@code quarkus.mysql-lock.admin.role}; every change is recorded in the audit trail under the
 * authenticated user's name. {@code datasource} picks a lock datasource's manager (the lock datasource's by default).
 * Answers are JSON; a request the API refuses is a 400 (a bad request), 404 (no such job or datasource) or 409 (a change
 * that does not apply now) with {@code {"error"}}.
 */
@Path("/mysql-lock/admin")
@Produces(MediaType.APPLICATION_JSON)
@RolesAllowed("${quarkus.mysql-lock.admin.role:mysql-lock-admin}")
@Blocking
public class AdminResource {

    @Context
    SecurityContext security;

    @GET
    @Path("/jobs")
    public Response jobs(@QueryParam("datasource") String datasource) {
        return answer(() -> fleet(datasource).jobs().stream().map(AdminResource::job).toList());
    }

    @GET
    @Path("/jobs/{name}")
    public Response job(@PathParam("name") String name, @QueryParam("datasource") String datasource) {
        return answer(() -> job(fleet(datasource).job(name).orElseThrow(() -> new NotFound("No job '" + name + "'"))));
    }

    @GET
    @Path("/jobs/{name}/history")
    public Response history(@PathParam("name") String name, @QueryParam("datasource") String datasource,
            @QueryParam("limit") @DefaultValue("20") int limit) {
        return answer(() -> fleet(datasource).history(name, limit).stream().map(AdminResource::run).toList());
    }

    @GET
    @Path("/jobs/{name}/changes")
    public Response changes(@PathParam("name") String name, @QueryParam("datasource") String datasource,
            @QueryParam("limit") @DefaultValue("20") int limit) {
        return answer(() -> fleet(datasource).changes(name, limit).stream().map(AdminResource::change).toList());
    }

    /** {@code action}: pause, resume, disable, enable; or run-now (202: it runs, its outcome is in its history). */
    @POST
    @Path("/jobs/{name}/{action}")
    public Response change(@PathParam("name") String name, @PathParam("action") String action,
            @QueryParam("datasource") String datasource, @QueryParam("reason") String reason) {
        String by = user();
        return answer(() -> {
            FleetJobs fleet = fleet(datasource);
            return switch (action) {
                case "pause" -> job(fleet.pause(name, by, reason));
                case "resume" -> job(fleet.resume(name, by, reason));
                case "disable" -> job(fleet.disable(name, by, reason));
                case "enable" -> job(fleet.enable(name, by, reason));
                case "run-now" -> {
                    fleet.runNow(name, by, reason); // its outcome goes to its history
                    yield new Accepted(Map.of("job", name, "running", true));
                }
                default -> throw new NotFound("No action '" + action + "': pause, resume, disable, enable or run-now");
            };
        });
    }

    @GET
    @Path("/locks")
    public Response holders(@QueryParam("datasource") String datasource) {
        return answer(() -> manager(datasource).holders().stream().map(AdminResource::lock).toList());
    }

    /** Releases a lease by force (LEASE engine): its holder is told it lost it. */
    @DELETE
    @Path("/locks/{name}")
    public Response forceRelease(@PathParam("name") String name, @QueryParam("datasource") String datasource,
            @QueryParam("reason") String reason) {
        String by = user();
        return answer(() -> {
            boolean released = manager(datasource).forceRelease(name, by, reason);
            if (!released) {
                throw new NotFound("No lease '" + name + "' is held");
            }
            return Map.of("lock", name, "released", true);
        });
    }

    private String user() {
        return security.getUserPrincipal() == null ? "(anonymous)" : security.getUserPrincipal().getName();
    }

    private static FleetJobs fleet(String datasource) {
        return manager(datasource).jobs();
    }

    private static MySqlLockManager manager(String datasource) {
        if (datasource == null) {
            return Arc.container().instance(MySqlLockManager.class).get(); // the lock datasource's
        }
        return MySqlLockManagerFactory.created(datasource)
                .orElseThrow(() -> new NotFound("No lock manager in use for datasource '" + datasource + "'"));
    }

    /** The work's answer as JSON, or its refusal with the right status. */
    private static Response answer(java.util.function.Supplier<Object> work) {
        try {
            Object answer = work.get();
            return answer instanceof Accepted accepted
                    ? Response.accepted(Json.write(accepted.body())).type(MediaType.APPLICATION_JSON_TYPE).build()
                    : Response.ok(Json.write(answer), MediaType.APPLICATION_JSON_TYPE).build();
        } catch (NotFound e) {
            return error(Response.Status.NOT_FOUND, e.getMessage());
        } catch (IllegalArgumentException e) {
            // "The fleet has no job", "This application has no job": a request for what does not exist
            return error(String.valueOf(e.getMessage()).contains("has no job") ? Response.Status.NOT_FOUND
                    : Response.Status.BAD_REQUEST, e.getMessage());
        } catch (IllegalStateException | UnsupportedOperationException e) {
            return error(Response.Status.CONFLICT, e.getMessage());
        }
    }

    private static Response error(Response.Status status, String message) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE)
                .entity(Json.write(Map.of("error", String.valueOf(message)))).build();
    }

    private static Map<String, Object> job(JobInfo job) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("name", job.name());
        entry.put("state", job.state());
        entry.put("latestTick", job.latestTick());
        entry.put("nextFire", job.nextFire());
        entry.put("lastOutcome", job.lastOutcome());
        entry.put("lastStarted", job.lastStarted());
        entry.put("lastEnded", job.lastEnded());
        entry.put("lastSuccess", job.lastSuccess());
        entry.put("lastFailure", job.lastFailure());
        return entry;
    }

    private static Map<String, Object> run(JobRun run) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("tick", run.tick());
        entry.put("kind", run.kind());
        entry.put("outcome", run.outcome());
        entry.put("instance", run.instance());
        entry.put("startedAt", run.startedAt());
        entry.put("endedAt", run.endedAt());
        entry.put("errorClass", run.errorClass());
        entry.put("errorMessage", run.errorMessage());
        return entry;
    }

    private static Map<String, Object> change(JobChange change) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("action", change.action());
        entry.put("from", change.from());
        entry.put("to", change.to());
        entry.put("by", change.by());
        entry.put("why", change.why());
        entry.put("instance", change.instance());
        entry.put("at", change.at());
        return entry;
    }

    private static Map<String, Object> lock(LockInfo info) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("name", info.name());
        entry.put("holder", info.holder());
        entry.put("since", info.since());
        entry.put("fencingToken", info.fencingToken());
        entry.put("mode", info.mode());
        return entry;
    }

    /** A request for what does not exist: 404. */
    private static final class NotFound extends RuntimeException {
        NotFound(String message) {
            super(message, null, false, false);
        }
    }

    /** A change accepted, going on: 202. */
    private record Accepted(Object body) {
    }
}
