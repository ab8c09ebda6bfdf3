package io.quarkiverse.mysqllock.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A loopback TCP proxy in front of a database server, for network faults: {@link #stall()} stops forwarding bytes while
 * every connection stays open (a congested or partitioned link that has not failed yet, or a black hole that accepts
 * and acknowledges but never answers); {@link #stallConnection(int)} does it to one connection only; {@link #cut()}
 * resets every connection and refuses new ones until {@link #heal()} (a link that failed); {@link #redirect(int)} sends
 * new connections elsewhere while the open ones stay where they are (a DNS name or virtual IP moved by a failover).
 * Listens on 127.0.0.1 only.
 */
public final class TcpProxy implements AutoCloseable {

    private final String name;
    private volatile int targetPort;
    private final ServerSocket server;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final Object stallMonitor = new Object();
    private volatile boolean stalled;
    /** How many reads are held back by a stall now: bytes a client or the server sent that wait to pass. */
    private final AtomicInteger heldBack = new AtomicInteger();
    private volatile boolean refusing;
    private volatile boolean closed;

    private TcpProxy(String name, int targetPort) throws IOException {
        this.name = name;
        this.targetPort = targetPort;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread acceptor = new Thread(this::accept, "proxy-" + name + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Starts a proxy to {@code 127.0.0.1:targetPort} on a free loopback port. */
    public static TcpProxy start(String name, int targetPort) {
        try {
            return new TcpProxy(name, targetPort);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start proxy " + name, e);
        }
    }

    /** The port clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** The JDBC URL of a server URL rewritten to go through this proxy. */
    public String rewrite(String jdbcUrl) {
        return jdbcUrl.replaceFirst(":" + targetPort + "/", ":" + port() + "/");
    }

    /**
     * Sends new connections to another server from now on, and resets the open ones: what clients of a virtual IP or
     * a router see when it moves to a promoted replica.
     */
    public void retarget(int newTargetPort) {
        targetPort = newTargetPort;
        for (Link link : List.copyOf(links)) {
            link.reset();
        }
    }

    /** Connections currently open through the proxy. */
    public int connections() {
        return links.size();
    }

    /** The server-side local ports of the open connections (the client ports the server sees), for diagnostics. */
    public List<Integer> serverSidePorts() {
        return links.stream().map(link -> link.upstream.getLocalPort()).sorted().toList();
    }

    /** Stops forwarding in both directions; connections stay open and bytes wait until {@link #resume()}. */
    public void stall() {
        stalled = true;
    }

    /**
     * Stops forwarding on one connection only, the one whose end at the server has this local port (what the server
     * shows as the client's port, in {@code information_schema.PROCESSLIST.HOST}), until {@link #resume()}.
     *
     * @return whether such a connection was open
     */
    public boolean stallConnection(int serverSidePort) {
        return withLink(serverSidePort, link -> link.stalled = true);
    }

    /**
     * Holds back the server's answers on one connection only (its statements still reach the server and run), until
     * {@link #resume()}: a statement that took effect on the server, whose client does not know it yet.
     *
     * @param serverSidePort the connection's port at the server, as for {@link #stallConnection(int)}
     * @return whether such a connection was open
     */
    public boolean stallAnswers(int serverSidePort) {
        return withLink(serverSidePort, link -> link.answersStalled = true);
    }

    private boolean withLink(int serverSidePort, Consumer<Link> action) {
        for (Link link : links) {
            if (link.upstream.getLocalPort() == serverSidePort) {
                action.accept(link);
                return true;
            }
        }
        return false;
    }

    /**
     * How many sends are held back by a stall now (a statement sent on a stalled connection, an answer to it): a test
     * waits for it to know a statement is stuck.
     */
    public int heldBack() {
        return heldBack.get();
    }

    /** Forwards again, on every connection. */
    public void resume() {
        synchronized (stallMonitor) {
            stalled = false;
            for (Link link : links) {
                link.stalled = false;
                link.answersStalled = false;
            }
            stallMonitor.notifyAll();
        }
    }

    /**
     * Sends new connections to another server from now on; the open ones stay with the old one: what clients of a DNS
     * name see when a failover moves it (a pool keeps its connections to the demoted server).
     */
    public void redirect(int newTargetPort) {
        targetPort = newTargetPort;
    }

    /** Resets every open connection (both ends) and refuses new ones until {@link #heal()}. */
    public void cut() {
        refusing = true;
        for (Link link : List.copyOf(links)) {
            link.reset();
        }
    }

    public void heal() {
        refusing = false;
    }

    @Override
    public void close() {
        closed = true;
        resume();
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        for (Link link : List.copyOf(links)) {
            link.reset();
        }
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            if (refusing) {
                resetQuietly(client);
                continue;
            }
            try {
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                Link link = new Link(client, upstream);
                links.add(link);
                link.start();
            } catch (IOException e) {
                // the server is down: the client sees the connection refused, as it would without the proxy
                resetQuietly(client);
            }
        }
    }

    private final class Link {
        private final Socket client;
        private final Socket upstream;
        private volatile boolean stalled;
        private volatile boolean answersStalled;

        Link(Socket client, Socket upstream) throws SocketException {
            this.client = client;
            this.upstream = upstream;
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
        }

        void start() {
            pump(client, upstream, false);
            pump(upstream, client, true);
        }

        private void pump(Socket from, Socket to, boolean answers) {
            Thread thread = new Thread(() -> {
                byte[] buffer = new byte[16 * 1024];
                try {
                    InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream();
                    int read;
                    while ((read = in.read(buffer)) >= 0) {
                        awaitNotStalled(this, answers);
                        out.write(buffer, 0, read);
                        out.flush();
                    }
                } catch (IOException | InterruptedException e) {
                    // reset by cut(), or an end closed
                }
                reset();
            }, "proxy-" + name + "-" + (answers ? "down" : "up"));
            thread.setDaemon(true);
            thread.start();
        }

        void reset() {
            links.remove(this);
            resetQuietly(client);
            resetQuietly(upstream);
        }
    }

    private boolean holds(Link link, boolean answers) {
        return stalled || link.stalled || (answers && link.answersStalled);
    }

    private void awaitNotStalled(Link link, boolean answers) throws InterruptedException {
        if (!holds(link, answers)) {
            return;
        }
        heldBack.incrementAndGet();
        try {
            synchronized (stallMonitor) {
                while (holds(link, answers) && !closed) {
                    stallMonitor.wait();
                }
            }
        } finally {
            heldBack.decrementAndGet();
        }
    }

    /** Closes with SO_LINGER 0: the peer gets a reset, as when a link or a host fails, not an orderly goodbye. */
    private static void resetQuietly(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (IOException e) {
            // already closed
        }
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }
}
