package io.quarkiverse.mysqllock.runtime.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.jboss.logging.Logger;

/**
 * Ends a statement's wait on the server when the thread waiting for its answer is interrupted. A platform thread blocked
 * in a socket read never sees its interrupt, so a watcher thread looks at the interrupt status of every watched thread
 * every {@link #POLL_NANOS}, and has {@code KILL QUERY} of an interrupted one's session sent from a pooled
 * connection. The server then ends the statement ({@code GET_LOCK} answers NULL, or the statement fails with error
 * 1317) and the session lives on, with every lock it holds.
 * <p>
 * A kill reaches the watched statement and nothing else. It is sent only while the watch is open, and only once the
 * server shows that session running a statement of the watched kind ({@code information_schema.PROCESSLIST}, which
 * also keeps a kill off a session of the same id on another server, should the datasource's address lead elsewhere
 * now); {@link Watch#close()} returns only when no kill statement is under way. A kill that finds the session idle is
 * dropped by the server when the session's next command starts (MySQL and MariaDB both reset a pending
 * {@code KILL QUERY} there), so the session's next statement never meets it. For the same reason a kill that reached the
 * server before the watched statement did would be lost: while the statement runs and its thread stays interrupted, it is
 * sent again after a pause that grows from 20 ms to a second.
 * <p>
 * Only a statement that is the sole user of its session may be watched: a kill of a session that several threads share
 * could end a co-tenant's statement.
 */
public final class WaitInterrupts implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(WaitInterrupts.class);

    /** How often the watcher looks at the watched threads' interrupt status. */
    static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long MAX_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** "Unknown thread id": the session ended meanwhile. */
    private static final int ER_NO_SUCH_THREAD = 1094;
    /** "You are not owner of thread": another user's session, never one of ours. */
    private static final int ER_KILL_DENIED = 1095;

    private final ConnectionSource connections;
    private final Set<Watch> watches = ConcurrentHashMap.newKeySet();
    /** The watcher thread, started with the first watch; guarded by this. */
    private Thread watcher;
    private volatile boolean closed;

    WaitInterrupts(ConnectionSource connections) {
        this.connections = connections;
    }

    /**
     * Watches the calling thread until the returned watch is closed: while it is open and the thread is interrupted, the
     * statement that server session {@code connectionId} runs is ended, once the server shows its text starting with
     * {@code shownAs}. The caller sends that statement right after this call, runs no other statement on the session
     * before {@link Watch#close()}, and closes the watch as soon as the statement answered or failed.
     */
    public Watch watch(long connectionId, String shownAs) {
        Watch watch = new Watch(Thread.currentThread(), connectionId, shownAs);
        if (!closed) {
            watches.add(watch);
            LockSupport.unpark(watcher());
        }
        return watch;
    }

    private synchronized Thread watcher() {
        if (watcher == null) {
            watcher = ConnectionSource.daemonThreads("mysql-lock-interrupts-").newThread(this::watchLoop);
            watcher.start();
        }
        return watcher;
    }

    private void watchLoop() {
        while (!closed) {
            if (watches.isEmpty()) {
                LockSupport.park(this); // a new watch unparks it
                continue;
            }
            long now = System.nanoTime();
            for (Watch watch : watches) {
                if (watch.thread.isInterrupted() && watch.schedule(now)) {
                    try {
                        connections.executor().execute(() -> kill(watch));
                    } catch (RejectedExecutionException e) {
                        watch.unschedule(); // shutting down: the wait ends with its own time-out, or its connection
                    }
                }
            }
            LockSupport.parkNanos(this, POLL_NANOS);
        }
    }

    /**
     * Ends the watched statement if the server shows it running; on a worker, not to delay other watches. On a pooled
     * connection of its own, never the housekeeping one: a burst of interrupts must not delay the renewals that keep every
     * held lock (with the pool exhausted, the kill waits for its next try, and the wait for its own end).
     */
    private void kill(Watch watch) {
        try {
            connections.withStatements("(interrupted wait)", raw -> {
                Statements.bound(raw, connections.statementTimeoutMillis());
                if (!runs(raw, watch) || !watch.begin()) {
                    return null; // not on the server yet (tried again later), or answered meanwhile
                }
                // Counted as sent before it is: a kill whose answer is lost (a time-out) may still reach the server.
                boolean sent = true;
                try (Statement statement = raw.createStatement()) {
                    statement.execute("KILL QUERY " + watch.connectionId);
                } catch (SQLException e) {
                    // a failure of this statement alone must not cost the connection
                    if (e.getErrorCode() != ER_NO_SUCH_THREAD && e.getErrorCode() != ER_KILL_DENIED) {
                        throw e;
                    }
                    sent = false; // refused: the statement was not ended by it
                } finally {
                    watch.end(sent);
                }
                return null;
            });
        } catch (SQLException | RuntimeException e) {
            LOG.debugf(e, "Could not end the wait of lock session %d for its interrupted thread", watch.connectionId);
        } finally {
            watch.unschedule();
        }
    }

    /** Whether the server shows the session running a statement of the watched kind. */
    private static boolean runs(Connection raw, Watch watch) throws SQLException {
        try (PreparedStatement statement = raw.prepareStatement(
                "SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE ?")) {
            statement.setLong(1, watch.connectionId);
            statement.setString(2, watch.shownAs + "%"); // a "_" in it matches any character, itself too
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** No more watches; the statements watched now end with their own time-outs, or their connections. */
    @Override
    public void close() {
        closed = true;
        watches.clear();
        Thread running;
        synchronized (this) {
            running = watcher;
        }
        if (running != null) {
            LockSupport.unpark(running);
        }
    }

    /** One statement, watched for its thread's interrupt until it is closed. */
    public final class Watch implements AutoCloseable {

        private final Thread thread;
        private final long connectionId;
        private final String shownAs;
        /** Guarded by this: open until closed. */
        private boolean open = true;
        /** Guarded by this: a kill task is queued or running (the watcher queues no other). */
        private boolean scheduled;
        /** Guarded by this: a {@code KILL QUERY} statement is under way ({@link #close()} waits for it). */
        private boolean killing;
        /** Guarded by this: the server was told to end the statement. */
        private boolean killed;
        /** Guarded by this: no kill is queued before this {@link System#nanoTime()}; the pause after the next one. */
        private long notBefore = System.nanoTime();
        private long retryNanos = FIRST_RETRY_NANOS;

        private Watch(Thread thread, long connectionId, String shownAs) {
            this.thread = thread;
            this.connectionId = connectionId;
            this.shownAs = shownAs;
        }

        /** Whether the server was told to end the statement: a NULL answer or an error of it may be the kill's. */
        public synchronized boolean killed() {
            return killed;
        }

        private synchronized boolean schedule(long now) {
            if (!open || scheduled || now - notBefore < 0) {
                return false;
            }
            scheduled = true;
            return true;
        }

        private synchronized void unschedule() {
            scheduled = false;
            notBefore = System.nanoTime() + retryNanos;
            retryNanos = Math.min(retryNanos * 2, MAX_RETRY_NANOS);
        }

        /** Whether a kill may be sent now: the watch is still open (closing it then waits for {@link #end}). */
        private synchronized boolean begin() {
            if (!open) {
                return false;
            }
            killing = true;
            return true;
        }

        private synchronized void end(boolean sent) {
            killing = false;
            killed |= sent;
            notifyAll();
        }

        /**
         * Ends the watch: once it returns, no kill for it is under way and none comes, so the session's next statement is
         * safe from it. May be called more than once. An interrupt of the caller meanwhile is kept.
         */
        @Override
        public void close() {
            watches.remove(this);
            boolean interrupted = false;
            synchronized (this) {
                open = false;
                while (killing) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        interrupted = true; // the interrupt the kill is for: kept for the caller
                    }
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
