package io.quarkiverse.mysqllock.test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for the servers the tests start, which bind them a moment later. Never from the kernel's ephemeral range: a
 * port taken there ({@code new ServerSocket(0)}) and closed can be given, before the server binds it, to one of the
 * many outgoing connections of a test run as its local port (a Galera node then failed to start: "bind: Address
 * already in use"). Below that range no outgoing connection takes a port by itself; each is checked bindable and
 * handed out once per JVM.
 */
public final class FreePorts {

    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();
    /** Where the ports come from: the 10,000 below the ephemeral range (Linux's default starts at 32768). */
    private static final int HIGHEST = ephemeralStart() - 1;
    private static final int LOWEST = Math.max(1024, HIGHEST - 10_000);

    private FreePorts() {
    }

    /** A loopback port free now, outside the ephemeral range, not handed out before in this JVM. */
    public static int take() {
        for (int attempt = 0; attempt < 1000; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST, HIGHEST + 1);
            if (HANDED_OUT.add(port)) {
                if (bindable(port)) {
                    return port;
                }
            }
        }
        throw new IllegalStateException("No free port between " + LOWEST + " and " + HIGHEST);
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Where the kernel's ephemeral ports begin; Linux's default where it cannot be read or leaves too little below. */
    private static int ephemeralStart() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
            int start = Integer.parseInt(range.split("\\s+")[0]);
            return start > 12_000 ? start : 32768;
        } catch (IOException | RuntimeException e) {
            return 32768;
        }
    }

}
