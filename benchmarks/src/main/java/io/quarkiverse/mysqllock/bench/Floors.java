package io.quarkiverse.mysqllock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

import javax.sql.DataSource;

import io.quarkiverse.mysqllock.runtime.lease.LeaseEngine;
import io.quarkiverse.mysqllock.runtime.table.LockTable;

/** The physical floors: the least SQL each engine could issue, raw on one dedicated connection per thread. */
final class Floors {

    private Floors() {
    }

    /** {@code SELECT GET_LOCK(?, 0)} + {@code SELECT RELEASE_LOCK(?)}. */
    static Subject named(DataSource dataSource) {
        return Subject.of("floor NAMED (raw GET_LOCK + RELEASE_LOCK)", lockName -> {
            Connection connection = dataSource.getConnection();
            PreparedStatement get = connection.prepareStatement("SELECT GET_LOCK(?, 0)");
            PreparedStatement release = connection.prepareStatement("SELECT RELEASE_LOCK(?)");
            get.setString(1, lockName);
            release.setString(1, lockName);
            return new Subject.Worker() {
                @Override
                public void cycle() throws SQLException {
                    expectOne(get, lockName);
                    expectOne(release, lockName);
                }

                @Override
                public void close() throws SQLException {
                    connection.close();
                }
            };
        });
    }

    /** The LEASE engine's own take and give-up statements ({@link LeaseEngine#takeStatement}). */
    static Subject lease(DataSource dataSource, String table, long leaseMicros) {
        return Subject.of("floor LEASE (raw take + give-up UPDATEs)", lockName -> {
            Connection connection = dataSource.getConnection();
            new LockTable(table, false).seed(connection, lockName);
            String owner = "floor#" + UUID.randomUUID();
            PreparedStatement take = connection.prepareStatement(LeaseEngine.takeStatement(table));
            take.setString(1, owner);
            take.setLong(2, leaseMicros);
            take.setString(3, lockName);
            take.setLong(4, 0); // max-clock-skew: the row is free at every cycle anyway
            PreparedStatement giveUp = connection.prepareStatement(LeaseEngine.giveUpStatement(table));
            giveUp.setString(1, lockName);
            giveUp.setString(2, owner);
            return new Subject.Worker() {
                @Override
                public void cycle() throws SQLException {
                    if (take.executeUpdate() != 1 || giveUp.executeUpdate() != 1) {
                        throw new IllegalStateException("lease " + lockName + " not taken and given up");
                    }
                }

                @Override
                public void close() throws SQLException {
                    connection.close();
                }
            };
        });
    }

    private static void expectOne(PreparedStatement statement, String lockName) throws SQLException {
        try (ResultSet rs = statement.executeQuery()) {
            if (!rs.next() || rs.getInt(1) != 1) {
                throw new IllegalStateException("named lock " + lockName + " not granted or released");
            }
        }
    }
}
