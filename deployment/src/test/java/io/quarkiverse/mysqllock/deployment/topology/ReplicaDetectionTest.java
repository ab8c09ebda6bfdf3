package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.deployment.testing.LockApp;
import io.quarkiverse.mysqllock.runtime.topology.Topology;
import io.quarkiverse.mysqllock.runtime.topology.TopologyProbe;
import io.quarkiverse.mysqllock.test.ReplicatedServers;
import io.quarkiverse.mysqllock.test.ReplicatedServers.Durability;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * What AUTO can see of a primary's replicas with a plain application user, beyond MariaDB's {@code Slaves_connected}:
 * MySQL has no such status. Semi-synchronous replication's status is readable by every user on both servers; where a
 * MySQL server writes a binary log and the user may not see who reads it, the topology says so, and the engine choice
 * logs that {@code quarkus.mysql-lock.replication} must be set.
 */
class ReplicaDetectionTest {

    @Test
    void semiSynchronousReplicasAreSeenByAPlainUser() throws Exception {
        try (ReplicatedServers servers = ReplicatedServers.start(Durability.SEMISYNC)) {
            TestDatabase primary = servers.primary();
            LockApp.await("the semi-synchronous replica to connect", Duration.ofSeconds(30),
                    () -> !"0".equals(ReplicatedServers.status(primary, "Rpl_semi_sync_master_clients")));
            try (Connection connection = primary.connect()) {
                Topology topology = TopologyProbe.probe(connection, false);
                assertThat(topology.replicated()).isTrue();
                assertThat(topology.reason()).contains("semi-synchronous replica(s) connected");
            }
        }
    }

    @Test
    void aBinaryLogWhoseReadersCannotBeSeenIsReportedOnMySql() throws SQLException {
        TestDatabase server = TestDatabase.startEmbedded("--log-bin=mysql-bin", "--server-id=7").withPrivilegeChecks();
        try {
            try (Connection admin = server.connect(); Statement statement = admin.createStatement()) {
                statement.execute("CREATE USER 'plain'@'%' IDENTIFIED BY 'plain'");
                statement.execute("GRANT SELECT, INSERT, UPDATE ON locktest.* TO 'plain'@'%'");
            }
            try (Connection plain = server.as("plain", "plain").connect()) {
                // as MySQL: no Slaves_connected to read, and neither SHOW REPLICAS nor performance_schema.threads
                Topology topology = TopologyProbe.probe(plain, false);
                assertThat(topology.replicated()).isFalse();
                assertThat(topology.unseen()).contains("binary log").contains("SHOW REPLICAS");
            }
            try (Connection admin = server.connect()) {
                // a user who may look, and sees no reader: nothing unseen
                assertThat(TopologyProbe.probe(admin, true).unseen()).isNull();
            }
        } finally {
            server.stop();
        }
    }
}
