package io.quarkiverse.mysqllock.it;

import static io.quarkiverse.mysqllock.it.FaultEnvironment.single;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.it.FaultEnvironment.Slot;

/** What the fault suite writes beside the journals when a fault is not recovered from. */
final class FaultDumps {

    private FaultDumps() {
    }

    /**
     * Every worker's threads, and the server's sessions holding hot names, beside the journals, when a fault was not
     * recovered from: what holds the locks.
     */
    static void threads(FaultEnvironment env, int faultNumber) {
        StringBuilder server = new StringBuilder();
        try (Connection connection = env.connectForChecks()) {
            for (String name : env.names) {
                Long holder = single(connection, "SELECT IS_USED_LOCK(?)", name);
                server.append(name).append(" held by session ").append(holder).append('\n');
            }
            try (Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery(
                            "SELECT ID, USER, HOST, COMMAND, TIME_MS, STATE, INFO FROM information_schema.PROCESSLIST")) {
                while (rs.next()) {
                    for (int column = 1; column <= 7; column++) {
                        server.append(column == 1 ? "" : "\t").append(rs.getString(column));
                    }
                    server.append('\n');
                }
            }
            for (Slot slot : env.slots) {
                server.append(slot.worker).append(" connections, by the port the server sees: ")
                        .append(slot.proxy.serverSidePorts()).append('\n');
            }
            Files.writeString(env.directory.resolve("server-after-fault-" + faultNumber + ".txt"), server);
        } catch (SQLException | IOException e) {
            env.options.log().println("[controller] could not read the server's state: " + e);
        }
        for (Slot slot : env.slots) {
            Path file = env.directory.resolve(slot.worker + "-threads-after-fault-" + faultNumber + ".txt");
            try {
                Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                        String.valueOf(slot.process.pid()), "Thread.print").redirectOutput(file.toFile())
                        .redirectErrorStream(true).start();
                jcmd.waitFor(30, TimeUnit.SECONDS);
            } catch (IOException e) {
                env.options.log().println("[controller] could not dump the threads of " + slot.worker + ": " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
