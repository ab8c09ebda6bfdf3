package io.quarkiverse.mysqllock.runtime;

import java.net.InetAddress;
import java.util.UUID;

/** {@code <host>/<pid>/<instance-id>}: unique per process, readable by an operator. */
final class HolderIdentity {

    private HolderIdentity() {
    }

    /**
     * At most this long: a lease's owner token adds its acquisition's random part and its length (about 30 characters)
     * and must fit the lock table's {@code owner VARCHAR(255)}; a server not in strict mode would cut it short, and a cut
     * length would tell watchers a shorter lease.
     */
    static final int MAX_LENGTH = 200;

    /** @param instanceId the configured instance id, or null for a random one */
    public static String of(String instanceId) {
        String id = instanceId != null && !instanceId.isBlank() ? instanceId.strip()
                : UUID.randomUUID().toString().substring(0, 8);
        String identity = hostName() + "/" + ProcessHandle.current().pid() + "/" + id;
        return identity.length() <= MAX_LENGTH ? identity : identity.substring(0, MAX_LENGTH);
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
