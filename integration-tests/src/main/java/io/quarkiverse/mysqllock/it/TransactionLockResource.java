package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockManager;

/**
 * Business work under a transaction-scoped lock: the lock ends with the transaction that writes the data. (No DDL in
 * here: MySQL and MariaDB commit implicitly before any DDL statement, which would end the lock early.)
 */
@Path("/tx-locks")
@Produces(MediaType.APPLICATION_JSON)
public class TransactionLockResource {

    @Inject
    LockManager locks;
    @Inject
    AgroalDataSource dataSource;
    @Inject
    Holds holds;

    @ConfigProperty(name = "lock-demo.worker.instance", defaultValue = "instance")
    String instance;

    /**
     * Records the work in {@code tx_history}, and holds the lock (and the transaction) until the test releases
     * {@code until} ({@link Holds}) and at least {@code holdMs} (without {@code until}: that long, as work would).
     * {@link Holds#CAP}, counted from the transaction's start (the lock's wait included), keeps a forgotten release
     * under the default transaction timeout (60 s): the transaction is still alive when the hold gives up, and the
     * failure (500) names the hold, not a transaction the reaper rolled back.
     */
    @POST
    @Path("/{name}")
    @Transactional
    public Map<String, Object> work(@PathParam("name") String name, @QueryParam("waitMs") @DefaultValue("0") long waitMs,
            @QueryParam("holdMs") @DefaultValue("0") long holdMs, @QueryParam("until") String until)
            throws SQLException, InterruptedException {
        long began = System.nanoTime();
        locks.acquireForTransaction(name, Duration.ofMillis(waitMs));
        try (Connection connection = dataSource.getConnection()) {
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO tx_history (name, instance,"
                    + " started_at) VALUES (?, ?, UTC_TIMESTAMP(6))", Statement.RETURN_GENERATED_KEYS)) {
                insert.setString(1, name);
                insert.setString(2, instance);
                insert.executeUpdate();
                var keys = insert.getGeneratedKeys();
                keys.next();
                long id = keys.getLong(1);
                holds.await(until, System.nanoTime(), holdMs, began);
                try (PreparedStatement end = connection
                        .prepareStatement("UPDATE tx_history SET ended_at = UTC_TIMESTAMP(6) WHERE id = ?")) {
                    end.setLong(1, id);
                    end.executeUpdate();
                }
            }
        }
        return Map.of("lock", name, "instance", instance);
    }
}
