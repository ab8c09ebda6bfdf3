package io.quarkiverse.mysqllock.deployment.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.test.GaleraCluster;

/**
 * A node's unix socket left behind by a node killed in an earlier run (SIGKILL removes nothing) must not pass for the
 * new node's: a clean-clone build failed "Can't connect to local server through socket '/tmp/mlk-g-27630.sock' (111)"
 * creating the test users, the file being from a run hours before on the same port (113 such files in /tmp). Stale
 * files stand in for every port a node may get, so the test does not depend on which port it gets.
 */
class GaleraStaleSocketTest {

    @Test
    void aNodeStartsWhereAnEarlierRunLeftItsSocketFile() throws IOException {
        GaleraCluster.assumeAvailable("Galera cluster tests");
        List<Path> planted = new ArrayList<>();
        try {
            for (int port = 1024; port < 65536; port++) {
                Path socket = GaleraCluster.socketOf(port);
                if (!Files.exists(socket)) {
                    Files.createFile(socket);
                    planted.add(socket);
                }
            }
            try (GaleraCluster cluster = GaleraCluster.start(1)) {
                assertThat(cluster.node(1).database().queryLong("SELECT 1")).isEqualTo(1);
            }
        } finally {
            for (Path socket : planted) {
                Files.deleteIfExists(socket);
            }
        }
    }
}
