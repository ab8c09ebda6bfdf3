package io.quarkiverse.mysqllock.runtime;

import java.net.InetAddress;
import java.util.UUID;

/** {@code <host>/<pid>/<instance-id>}: unique per process, readable by an operator. */
final class HolderIdentity {

    private HolderIdentity() {
    }

    /** @param instanceId the configured instance id, or null for a random one */
    public static String of(String instanceId) {
        String id = instanceId != null && !instanceId.isBlank() ? instanceId.strip()
                : UUID.randomUUID().toString().substring(0, 8);
        return hostName() + "/" + ProcessHandle.current().pid() + "/" + id;
    }

    private static String hostName() {
        String host = System.getenv("HOSTNAME");
        if (host != null && !host.isBlank()) {
            return host.strip();
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "unknown-host";
        }
    }
}
