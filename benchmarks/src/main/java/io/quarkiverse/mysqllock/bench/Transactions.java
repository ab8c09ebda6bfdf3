package io.quarkiverse.mysqllock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockManager;

/**
 * The fenced commit's cost: a transaction under a lock (take the lock, update one row of the thread's own, commit,
 * release), plain or fenced ({@code LockManager.fence} before the commit: a locking read of the lock's fence, and on
 * NAMED the token each grant is issued with {@code fenced-commit=true}).
 */
final class Transactions {

    static final String TABLE = "bench_fenced";

    private Transactions() {
    }

    static void createTable(AgroalDataSource dataSource) throws Exception {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " (id VARCHAR(191) PRIMARY KEY, v BIGINT NOT NULL)");
        }
    }

    /** @param fenced whether each commit is fenced ({@code locks.fence(lock, connection)} just before it) */
    static Subject of(String name, LockManager locks, AgroalDataSource dataSource, boolean fenced) {
        return Subject.of(name, lockName -> {
            Connection connection = dataSource.getConnection();
            try (PreparedStatement seed = connection.prepareStatement(
                    "INSERT IGNORE INTO " + TABLE + " (id, v) VALUES (?, 0)")) {
                seed.setString(1, lockName);
                seed.executeUpdate();
            }
            connection.setAutoCommit(false);
            PreparedStatement update = connection.prepareStatement("UPDATE " + TABLE + " SET v = v + 1 WHERE id = ?");
            update.setString(1, lockName);
            return new Subject.Worker() {
                @Override
                public void cycle() throws Exception {
                    try (LockHandle lock = locks.acquire(lockName, Duration.ZERO)) {
                        update.executeUpdate();
                        if (fenced) {
                            locks.fence(lock, connection);
                        }
                        connection.commit();
                    }
                }

                @Override
                public void close() throws Exception {
                    update.close();
                    connection.rollback();
                    connection.setAutoCommit(true);
                    connection.close();
                }
            };
        });
    }
}
