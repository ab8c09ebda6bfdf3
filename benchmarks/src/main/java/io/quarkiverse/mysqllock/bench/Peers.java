package io.quarkiverse.mysqllock.bench;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

import javax.sql.DataSource;

import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider;

/** The peers, each as its documentation sets it up, on the same database (and a local Redis for Redisson). */
final class Peers {

    private Peers() {
    }

    /** ShedLock's plain-JDBC provider: {@code lock()} inserts or updates its row, {@code unlock()} updates it. */
    static Subject shedLock(DataSource dataSource) throws SQLException {
        execute(dataSource, "CREATE TABLE IF NOT EXISTS shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL,"
                + " locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL,"
                + " PRIMARY KEY (name))");
        JdbcLockProvider provider = new JdbcLockProvider(dataSource);
        return Subject.of(
                "ShedLock JDBC " + version(JdbcLockProvider.class, "net.javacrumbs.shedlock", "shedlock-provider-jdbc"),
                lockName -> () -> {
                    Optional<SimpleLock> lock = provider
                            .lock(new LockConfiguration(Instant.now(), lockName, Duration.ofSeconds(30), Duration.ZERO));
                    lock.orElseThrow(() -> new IllegalStateException("ShedLock refused " + lockName)).unlock();
                });
    }

    /** Spring Integration's {@code JdbcLockRegistry} over {@code DefaultLockRepository} and its MySQL schema. */
    static Subject spring(DataSource dataSource) throws Exception {
        try (InputStream schema = DefaultLockRepository.class
                .getResourceAsStream("/org/springframework/integration/jdbc/schema-mysql.sql")) {
            String sql = new String(schema.readAllBytes(), StandardCharsets.UTF_8);
            for (String statement : sql.split(";")) {
                String trimmed = statement.replaceAll("(?m)^--.*$", "").strip();
                if (trimmed.startsWith("CREATE TABLE INT_LOCK")) {
                    execute(dataSource, trimmed.replace("CREATE TABLE INT_LOCK", "CREATE TABLE IF NOT EXISTS INT_LOCK"));
                }
            }
        }
        DefaultLockRepository repository = new DefaultLockRepository(dataSource);
        repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        JdbcLockRegistry registry = new JdbcLockRegistry(repository);
        return Subject.of(
                "Spring Integration JdbcLockRegistry "
                        + version(JdbcLockRegistry.class, "org.springframework.integration", "spring-integration-jdbc"),
                lockName -> () -> {
                    Lock lock = registry.obtain(lockName);
                    if (!lock.tryLock()) {
                        throw new IllegalStateException("JdbcLockRegistry refused " + lockName);
                    }
                    lock.unlock();
                });
    }

    /** Redisson's {@code RLock} (watchdog-renewed) on a local Redis. */
    static Subject redisson(String redisAddress) {
        Config config = new Config();
        config.useSingleServer().setAddress(redisAddress);
        RedissonClient client = Redisson.create(config);
        return new Subject() {
            @Override
            public String name() {
                return "Redisson RLock " + version(Redisson.class, "org.redisson", "redisson") + " (local Redis)";
            }

            @Override
            public Worker worker(String lockName) {
                RLock lock = client.getLock(lockName);
                return () -> {
                    if (!lock.tryLock()) {
                        throw new IllegalStateException("Redisson refused " + lockName);
                    }
                    lock.unlock();
                };
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }

    /**
     * Redisson's {@code RSemaphore} on a local Redis, with as many permits as threads, each cycle a permit acquired and
     * released. (A crashed holder's permit never comes back to an {@code RSemaphore}; Redisson's answer to that is the
     * {@code RPermitExpirableSemaphore}, a lease per permit.)
     */
    static Subject redissonSemaphore(String redisAddress, int permits) {
        Config config = new Config();
        config.useSingleServer().setAddress(redisAddress);
        RedissonClient client = Redisson.create(config);
        RSemaphore semaphore = client.getSemaphore("bench:semaphore:" + permits);
        semaphore.delete();
        semaphore.trySetPermits(permits);
        return new Subject() {
            @Override
            public String name() {
                return "Redisson RSemaphore " + version(Redisson.class, "org.redisson", "redisson") + " (local Redis)";
            }

            @Override
            public Worker worker(String lockName) {
                return () -> {
                    if (!semaphore.tryAcquire(Duration.ofSeconds(5))) {
                        throw new IllegalStateException("Redisson RSemaphore gave no permit");
                    }
                    semaphore.release();
                };
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }

    private static void execute(DataSource dataSource, String sql) throws SQLException {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** The library's version: its jar manifest's, else its Maven pom.properties'. */
    static String version(Class<?> type, String groupId, String artifactId) {
        String version = type.getPackage().getImplementationVersion();
        if (version != null) {
            return version;
        }
        try (InputStream in = type.getResourceAsStream("/META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties")) {
            java.util.Properties properties = new java.util.Properties();
            if (in != null) {
                properties.load(in);
            }
            return properties.getProperty("version", "");
        } catch (java.io.IOException e) {
            return "";
        }
    }
}
