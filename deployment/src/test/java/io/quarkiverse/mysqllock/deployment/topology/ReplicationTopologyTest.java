package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.deployment.testing.StandaloneLocks;
import io.quarkiverse.mysqllock.runtime.MySqlLockRuntimeConfig.Mode;
import io.quarkiverse.mysqllock.runtime.topology.Topology;
import io.quarkiverse.mysqllock.runtime.topology.TopologyProbe;
import io.quarkiverse.mysqllock.test.ReplicatedServers;
import io.quarkiverse.mysqllock.test.ReplicatedServers.Durability;
import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;
import io.quarkus.runtime.configuration.ConfigurationException;

/**
 * A real primary and replica (two embedded MariaDB servers, {@link ReplicatedServers}): AUTO chooses LEASE on both,
 * NAMED on a standalone server; a lease taken on the primary reaches the replica, and survives its promotion after the
 * primary dies; a new replica attached to the promoted server starts from a copy of its data.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // the promotion ends the pair
class ReplicationTopologyTest {

    static ReplicatedServers servers;
    static TestDatabase primary;
    static TestDatabase replica;

    @BeforeAll
    static void startPair() {
        // Outside a Quarkus application nobody registered event-loop detectors: there are none.
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
        servers = ReplicatedServers.start(Durability.ASYNC);
        primary = servers.primary();
        replica = servers.replica();
        LockApp.await("the replica to connect", Duration.ofSeconds(30),
                () -> "1".equals(ReplicatedServers.status(primary, "Slaves_connected"))
                        && "ON".equals(ReplicatedServers.status(replica, "Slave_running")));
    }

    @AfterAll
    static void stopPair() {
        if (servers != null) {
            servers.close();
        }
    }

    @Test
    @Order(1)
    void autoChoosesLeaseOnAReplicatedPairAndNamedOnAStandaloneServer() throws SQLException {
        try (StandaloneLocks onPrimary = new StandaloneLocks(primary, "p", Mode.AUTO, Optional.empty());
                StandaloneLocks standalone = new StandaloneLocks("s", Mode.AUTO)) {
            assertThat(onPrimary.locks.mode()).isEqualTo(LockMode.LEASE);
            assertThat(standalone.locks.mode()).isEqualTo(LockMode.NAMED);
        }
        // An instance on the replica would write its membership there (the tests' root user ignores read_only, and a
        // row written on a replica stops its replication): its detection is checked alone. ReadOnlyServerTest starts
        // an instance on a read-only server.
        try (Connection connection = replica.connect()) {
            Topology topology = TopologyProbe.probe(connection);
            assertThat(topology.replicated()).isTrue();
            assertThat(topology.reason()).contains("Slave_running");
        }
    }

    @Test
    @Order(2)
    void namedLocksAreRefusedOnAReadOnlyServer() throws Exception {
        replica.execute("SET GLOBAL read_only = 1");
        try {
            assertThatThrownBy(() -> new StandaloneLocks(replica, "ro", Mode.NAMED, Optional.empty()))
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageContaining("quarkus.mysql-lock.mode=named is refused")
                    .hasMessageContaining("read-only");
        } finally {
            replica.execute("SET GLOBAL read_only = 0");
        }
    }

    @Test
    @Order(3)
    void aLeaseReachesTheReplicaAndSurvivesItsPromotion() throws Exception {
        long fence;
        try (StandaloneLocks onPrimary = new StandaloneLocks(primary, "old-primary", Mode.AUTO, Optional.empty())) {
            LockHandle handle = onPrimary.locks.acquire("repl:job", Duration.ZERO);
            fence = handle.fencingToken();
            LockApp.await("the lease row on the replica", Duration.ofSeconds(10), () -> fence == query(replica,
                    "SELECT fence FROM mysql_lock WHERE name = 'repl:job' AND owner LIKE '%/old-primary#%'"));

            // Promotion: the primary dies, the replica applies what it received and takes the writes.
            TestDatabase promotedServer = servers.failOver();
            try (StandaloneLocks promoted = new StandaloneLocks(promotedServer, "new-primary", Mode.AUTO,
                    Optional.of(true))) {
                assertThat(promoted.locks.mode()).isEqualTo(LockMode.LEASE);
                // The lease is still there: nobody takes it before it expires (no renewal reaches it any more).
                assertThat(promoted.locks.tryAcquire("repl:job")).isEmpty();
                try (LockHandle next = promoted.locks.acquire("repl:job", Duration.ofSeconds(10))) {
                    assertThat(next.fencingToken()).isGreaterThan(fence);
                }
            }
        }
    }

    @Test
    @Order(4)
    void aNewReplicaStartsFromACopyOfThePrimaryNotFromItsWholeBinaryLog() throws Exception {
        TestDatabase current = servers.primary();
        long fence = query(current, "SELECT fence FROM mysql_lock WHERE name = 'repl:job'");
        assertThat(fence).isPositive();
        // The history that wrote the row cannot be replayed any more: its binary logs are gone.
        current.execute("FLUSH BINARY LOGS");
        current.execute("PURGE BINARY LOGS TO '" + showMasterStatus(current) + "'");

        TestDatabase newReplica = servers.attachReplica();
        assertThat(query(newReplica, "SELECT fence FROM mysql_lock WHERE name = 'repl:job'")).isEqualTo(fence);
        try (StandaloneLocks onPrimary = new StandaloneLocks(current, "after-attach", Mode.AUTO, Optional.of(true));
                LockHandle handle = onPrimary.locks.acquire("repl:after-attach", Duration.ZERO)) {
            LockApp.await("the new lease row on the new replica", Duration.ofSeconds(10), () -> handle
                    .fencingToken() == query(newReplica, "SELECT fence FROM mysql_lock WHERE name = 'repl:after-attach'"));
        }
    }

    private static String showMasterStatus(TestDatabase db) throws SQLException {
        try (Connection connection = db.connect();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SHOW MASTER STATUS")) {
            rs.next();
            return rs.getString("File");
        }
    }

    private static long query(TestDatabase db, String sql) {
        try (Connection connection = db.connect();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery(sql)) {
            return rs.next() ? rs.getLong(1) : -1;
        } catch (SQLException e) {
            return -1;
        }
    }
}
