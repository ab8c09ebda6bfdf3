package io.quarkiverse.mysqllock.test;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A multi-primary MariaDB Galera cluster on loopback, for tests: Debian's {@code mariadb-server} with the
 * {@code galera-4} provider and {@code rsync} state transfer, each node a process of its own with its own data
 * directory and ports. The first node bootstraps the cluster ({@code gcomm://}), the others join it by a state
 * transfer (SST, rsync); a node killed and started again rejoins by an incremental transfer (IST).
 * <p>
 * A node can be killed (SIGKILL), started again, or isolated from the others ({@code gmcast.isolate}: the group
 * communication drops every link of the node and refuses new ones, as a network partition does; the isolated node
 * becomes non-primary and refuses statements with error 1047) and healed. A node can run with its clock shifted
 * ({@code libfaketime}), for clock-skew tests.
 * <p>
 * Where the packages are absent, {@link #unavailable()} installs them with apt when the build runs as root; otherwise
 * it says why a cluster cannot run here.
 */
public final class GaleraCluster implements AutoCloseable {

    /**
     * How long the others take at most to evict a node they cannot reach (it died, or is cut off), the cluster's
     * {@code evs.suspect_timeout} plus its {@code evs.inactive_check_period} and a margin for the view change: no node
     * commits anything meanwhile.
     */
    public static final Duration EVICTION = Duration.ofMillis(1_500 + 300 + 700);

    private final String name;
    private final List<Node> nodes = new ArrayList<>();

    private GaleraCluster(String name) {
        this.name = name;
    }

    /**
     * Why a Galera cluster cannot run on this machine, or empty if it can. Installs Debian's packages when they are
     * absent and this process runs as root with apt (once per JVM).
     */
    public static Optional<String> unavailable() {
        return GaleraPackages.unavailable();
    }

    /**
     * For tests: aborts the calling test, saying why, where a cluster cannot run here; under {@code CI=true} it lets
     * the test go on (and fail when it starts a cluster): the Galera tests must run in CI.
     */
    public static void assumeAvailable(String what) {
        Optional<String> why = unavailable();
        if (why.isPresent() && !"true".equals(System.getenv("CI"))) {
            org.junit.jupiter.api.Assumptions.abort(what + " skipped: " + why.get());
        }
    }

    /**
     * Starts a cluster of {@code size} nodes and returns once every node is synced and the cluster has them all.
     *
     * @param clockOffsets each node's clock shift (libfaketime), in node order; none for real clocks
     */
    public static GaleraCluster start(int size, Duration... clockOffsets) {
        Optional<String> why = unavailable();
        if (why.isPresent()) {
            throw new IllegalStateException("Cannot start a Galera cluster: " + why.get());
        }
        GaleraCluster cluster = new GaleraCluster("mlk-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        try {
            for (int i = 0; i < size; i++) {
                cluster.nodes.add(new Node(cluster, i + 1, i < clockOffsets.length ? clockOffsets[i] : Duration.ZERO));
            }
            Node first = cluster.nodes.get(0);
            first.initialize();
            first.launch(true, Optional.empty());
            first.createUsers();
            first.awaitSynced(Duration.ofSeconds(60));
            for (Node joiner : cluster.nodes.subList(1, size)) {
                joiner.prepareEmpty();
                joiner.launch(false, Optional.empty());
                joiner.awaitSynced(Duration.ofSeconds(120));
            }
            cluster.awaitSize(size, Duration.ofSeconds(60));
            return cluster;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /** The unix socket of a node on this port (the path has a 107-character limit: kept short). */
    public static Path socketOf(int port) {
        return Path.of("/tmp/mlk-g-" + port + ".sock");
    }

    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    public Node node(int number) {
        return nodes.get(number - 1);
    }

    /** Waits until every running, connected node counts {@code size} members in the primary component. */
    public void awaitSize(int size, Duration wait) {
        Await.until("the Galera cluster to have " + size + " synced members", wait,
                () -> nodes.stream().filter(n -> n.running() && !n.isolated).allMatch(n -> n.clusterSize() == size
                        && n.ready()));
    }

    @Override
    public void close() {
        for (Node node : nodes) {
            node.destroy();
        }
    }

    /** One node: its server process, ports and data directory. */
    public static final class Node {
        private final GaleraCluster cluster;
        private final int number;
        private final Duration clockOffset;
        private final int port;
        private final int gcommPort;
        private final int istPort;
        private final int sstPort;
        private final Path directory;
        private final Path data;
        private volatile Process process;
        private volatile boolean isolated;

        private Node(GaleraCluster cluster, int number, Duration clockOffset) {
            this.cluster = cluster;
            this.number = number;
            this.clockOffset = clockOffset;
            try {
                this.port = FreePorts.take();
                this.gcommPort = FreePorts.take();
                this.istPort = FreePorts.take();
                this.sstPort = FreePorts.take();
                this.directory = Files.createTempDirectory("mlk-galera-" + number + "-");
                this.data = directory.resolve("data");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        public int number() {
            return number;
        }

        public int port() {
            return port;
        }

        /** The node as a {@link TestDatabase} (root over TCP, schema {@value TestDatabase#SCHEMA}). */
        public TestDatabase database() {
            return TestDatabase.external("jdbc:mysql://127.0.0.1:" + port + "/" + TestDatabase.SCHEMA, "root", "");
        }

        public boolean running() {
            Process p = process;
            return p != null && p.isAlive();
        }

        /** {@code wsrep_cluster_size} as this node sees it, or 0 when it does not answer. */
        public long clusterSize() {
            return status("wsrep_cluster_size").map(Long::parseLong).orElse(0L);
        }

        /** {@code wsrep_ready}: whether the node accepts statements (it is in the primary component and synced). */
        public boolean ready() {
            return status("wsrep_ready").map("ON"::equalsIgnoreCase).orElse(false);
        }

        /** {@code wsrep_cluster_status}: {@code Primary}, {@code non-Primary} or {@code Disconnected}. */
        public String clusterStatus() {
            return status("wsrep_cluster_status").orElse("down");
        }

        private Optional<String> status(String variable) {
            if (!running()) {
                return Optional.empty();
            }
            try (Connection connection = database().connect();
                    Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery("SHOW GLOBAL STATUS LIKE '" + variable + "'")) {
                return rs.next() ? Optional.of(rs.getString(2)) : Optional.empty();
            } catch (SQLException e) {
                return Optional.empty();
            }
        }

        /** SIGKILL: the node dies as a host failure would; the others go on without it. */
        public void kill() {
            Process p = process;
            if (p == null) {
                return;
            }
            p.destroyForcibly();
            try {
                p.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }

        /** Starts a killed node again; it rejoins the cluster (IST from a donor) and returns once it is synced. */
        public void restart() {
            kill();
            isolated = false;
            // A killed node does not know where it stopped until InnoDB tells (what Debian's galera_recovery does):
            // with that position it rejoins by IST; without it, it would need a whole state transfer (SST).
            Optional<String> position = recoverPosition();
            prepareEmpty(); // an SST, if one is needed after all, writes as nobody
            launch(false, position);
            awaitSynced(Duration.ofSeconds(120));
        }

        private Optional<String> recoverPosition() {
            Path log = directory.resolve("recover.log");
            run(List.of(GaleraPackages.MARIADBD.toString(), "--no-defaults", "--user=root", "--datadir=" + data,
                    "--log-error=" + log, "--innodb-buffer-pool-size=64M", "--wsrep-on=ON",
                    "--wsrep-provider=" + GaleraPackages.PROVIDER, "--wsrep-cluster-address=gcomm://" + peers(),
                    "--binlog-format=ROW", "--wsrep-recover"),
                    "recover node " + number + "'s position");
            try {
                java.util.regex.Matcher found = java.util.regex.Pattern.compile("Recovered position: (\\S+:-?\\d+)")
                        .matcher(Files.readString(log));
                String last = null;
                while (found.find()) {
                    last = found.group(1);
                }
                return Optional.ofNullable(last).filter(p -> !p.startsWith("00000000-"));
            } catch (IOException e) {
                return Optional.empty();
            }
        }

        /**
         * Cuts the node off from the others ({@code gmcast.isolate=1}): every group-communication link is closed and
         * new ones are refused, as a network partition would. Returns once the node is non-primary.
         */
        public void isolate() {
            isolated = true;
            setProviderOption("gmcast.isolate=1");
            Await.until("node " + number + " to leave the primary component", Duration.ofSeconds(30),
                    () -> !"Primary".equals(clusterStatus()));
        }

        /** Ends an isolation; returns once the node is back in the primary component and synced. */
        public void heal() {
            setProviderOption("gmcast.isolate=0");
            isolated = false;
            awaitSynced(Duration.ofSeconds(120));
        }

        private void setProviderOption(String option) {
            try (Connection connection = database().connect(); Statement statement = connection.createStatement()) {
                statement.execute("SET GLOBAL wsrep_provider_options = '" + option + "'");
            } catch (SQLException e) {
                throw new IllegalStateException("Could not set " + option + " on node " + number, e);
            }
        }

        /** The node's error log: what the server said about joining, transfers and partitions. */
        public Path errorLog() {
            return directory.resolve("error.log");
        }

        private void initialize() {
            run(List.of(GaleraPackages.INSTALL_DB.toString(), "--no-defaults", "--user=root", "--datadir=" + data,
                    "--auth-root-authentication-method=normal", "--skip-test-db"), "initialize node " + number);
        }

        /** A joiner's data directory: empty, and writable by the rsync daemon of the state transfer (user nobody). */
        private void prepareEmpty() {
            try {
                Files.createDirectories(data);
                run(List.of("chown", "-R", "nobody", data.toString()), "hand node " + number + "'s data to nobody");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Root over TCP, and the test schema; through the unix socket, as soon as the server answers there. */
        private void createUsers() {
            Await.until("Galera node " + number + " to answer on its socket", Duration.ofSeconds(60),
                    () -> Files.exists(socket()) || !running());
            String sql = "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';"
                    + " GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;"
                    + " CREATE DATABASE IF NOT EXISTS " + TestDatabase.SCHEMA + ";";
            run(List.of("/usr/bin/mariadb", "--no-defaults", "--protocol=socket", "--socket=" + socket(), "-uroot",
                    "-e", sql), "create the test users on node " + number);
        }

        private Path socket() {
            return socketOf(port);
        }

        private String peers() {
            return cluster.nodes.stream().filter(n -> n != this).map(n -> "127.0.0.1:" + n.gcommPort)
                    .collect(Collectors.joining(","));
        }

        private void launch(boolean bootstrap, Optional<String> startPosition) {
            // A socket file left by a node killed in an earlier run on this port (SIGKILL removes nothing) would pass
            // for this node's before it created its own; the port is this node's now (FreePorts found it bindable).
            try {
                Files.deleteIfExists(socket());
            } catch (IOException e) {
                throw new UncheckedIOException("Could not remove the stale socket " + socket(), e);
            }
            String peers = peers();
            List<String> command = new ArrayList<>(List.of(GaleraPackages.MARIADBD.toString(), "--no-defaults", "--user=root",
                    "--datadir=" + data, "--port=" + port, "--bind-address=127.0.0.1", "--socket=" + socket(),
                    "--pid-file=" + directory.resolve("mariadbd.pid"), "--log-error=" + errorLog(),
                    "--skip-name-resolve", "--max-connections=1000", "--innodb-buffer-pool-size=64M",
                    "--innodb-flush-log-at-trx-commit=2", "--binlog-format=ROW", "--default-storage-engine=InnoDB",
                    "--innodb-autoinc-lock-mode=2", "--wsrep-on=ON", "--wsrep-provider=" + GaleraPackages.PROVIDER,
                    "--wsrep-cluster-name=" + cluster.name,
                    "--wsrep-cluster-address=gcomm://" + (bootstrap ? "" : peers),
                    "--wsrep-node-name=node" + number, "--wsrep-node-address=127.0.0.1:" + gcommPort,
                    "--wsrep-node-incoming-address=127.0.0.1:" + port, "--wsrep-sst-method=rsync",
                    "--wsrep-sst-receive-address=127.0.0.1:" + sstPort,
                    "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:" + gcommPort + ";ist.recv_addr=127.0.0.1:"
                            + istPort + ";gcache.size=256M"
                            // an unreachable node is evicted within EVICTION (default 5 s or more): until then, no
                            // node commits anything
                            + ";evs.keepalive_period=PT0.3S;evs.inactive_check_period=PT0.3S"
                            + ";evs.suspect_timeout=PT1.5S;evs.inactive_timeout=PT3S;evs.install_timeout=PT3S"));
            startPosition.ifPresent(at -> command.add("--wsrep-start-position=" + at));
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("stdout.log").toFile()));
            if (!clockOffset.isZero()) {
                builder.environment().put("LD_PRELOAD", GaleraPackages.faketimeLibrary().orElseThrow().toString());
                // seconds with a fraction: libfaketime reads "+600ms" as 600 minutes
                builder.environment().put("FAKETIME",
                        String.format(java.util.Locale.ROOT, "%+.3f", clockOffset.toMillis() / 1000.0));
                builder.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
            }
            try {
                process = builder.start();
            } catch (IOException e) {
                throw new IllegalStateException("Could not start Galera node " + number, e);
            }
        }

        private void awaitSynced(Duration wait) {
            try {
                Await.until("Galera node " + number + " to be synced (see " + errorLog() + ")", wait, () -> {
                    if (!running()) {
                        throw new IllegalStateException("Galera node " + number + " exited: " + tail(errorLog()));
                    }
                    return ready() && "Primary".equals(clusterStatus());
                });
            } catch (AssertionError | RuntimeException e) {
                throw new IllegalStateException(e.getMessage() + "\n" + tail(errorLog()), e);
            }
        }

        private void destroy() {
            kill();
            try (Stream<Path> files = Files.walk(directory)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            } catch (IOException e) {
                // a temporary directory
            }
        }

        private static String tail(Path log) {
            try {
                List<String> lines = Files.readAllLines(log);
                return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
            } catch (IOException e) {
                return "(no log)";
            }
        }

        private static void run(List<String> command, String what) {
            try {
                Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
                String output = new String(p.getInputStream().readAllBytes());
                if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    throw new IllegalStateException("Could not " + what + ": " + output);
                }
            } catch (IOException e) {
                throw new IllegalStateException("Could not " + what, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted: " + what, e);
            }
        }
    }
}
