package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.runtime.topology.Topology;
import io.quarkiverse.mysqllock.runtime.topology.TopologyProbe;
import io.quarkiverse.mysqllock.test.TestDatabase;

/**
 * The probe's Group Replication statement on a real server that has no such variables (MariaDB; MySQL without the
 * plugin answers the same error 1193): skipped and said to be, never fatal, the connection usable after it, and nothing
 * taken for a group (issue 44, item 7). The decision on a MySQL member's values is {@code GroupReplicationDecisionTest}'s:
 * no MySQL server can be installed on the build machines.
 */
class GroupReplicationProbeTest {

    @Test
    void aServerWithoutGroupReplicationVariablesIsProbedAsBefore() throws Exception {
        try (Connection connection = TestDatabase.shared().connect()) {
            for (boolean asMariaDb : new boolean[] { true, false }) {
                Topology topology = TopologyProbe.probe(connection, asMariaDb);
                assertThat(topology.multiPrimary()).isFalse();
                assertThat(topology.replicated()).isFalse();
                assertThat(topology.skipped()).as("asked, and refused as unknown")
                        .anyMatch(skipped -> skipped.contains("group_replication_single_primary_mode")
                                && skipped.contains("1193"));
            }
            Topology configured = TopologyProbe.fromConfiguration(Optional.of(false), Optional.empty()).orElseThrow();
            Topology withoutDetection = TopologyProbe.withoutReplicationDetection(configured, connection);
            assertThat(withoutDetection.multiPrimary()).isFalse();
            assertThat(withoutDetection.reason()).isEqualTo(configured.reason());
            try (Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery("SELECT 1")) {
                assertThat(rs.next()).as("the connection still works").isTrue();
            }
        }
    }
}
