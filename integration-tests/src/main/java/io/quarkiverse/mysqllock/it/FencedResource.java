package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.agroal.api.AgroalDataSource;

/** The resource the fault suite's holders protect: a counter per name that accepts a write only with a higher fence. */
@Singleton
public class FencedResource {

    @Inject
    AgroalDataSource dataSource;

    /**
     * The fenced write: accepted only if no later holder's token reached the resource first. A run-once name's resource
     * row is created by its first write.
     */
    String write(String section, String name, long fence) {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            try (PreparedStatement seed = connection.prepareStatement("INSERT IGNORE INTO resource (name) VALUES (?)")) {
                seed.setString(1, name);
                seed.executeUpdate();
            }
            try (PreparedStatement update = connection.prepareStatement(
                    "UPDATE resource SET value = value + 1, last_fence = ? WHERE name = ? AND last_fence < ?")) {
                update.setLong(1, fence);
                update.setString(2, name);
                update.setLong(3, fence);
                if (update.executeUpdate() == 0) {
                    connection.rollback();
                    return "rejected";
                }
            }
            // When, on this host's clock, which the journals use: once the update holds the row, before the commit (a
            // later writer waits for this one's commit). Not the server's clock: a Galera node whose clock is ahead
            // dated this holder's write ten minutes after a later holder's start.
            long writtenAt = FaultJournal.now();
            try (PreparedStatement record = connection.prepareStatement(
                    "INSERT INTO resource_write (name, fence, section, written_at) VALUES (?, ?, ?, ?)")) {
                record.setString(1, name);
                record.setLong(2, fence);
                record.setString(3, section);
                record.setLong(4, writtenAt);
                record.executeUpdate();
            }
            connection.commit();
            return "accepted";
        } catch (SQLException e) {
            return "failed";
        }
    }
}
