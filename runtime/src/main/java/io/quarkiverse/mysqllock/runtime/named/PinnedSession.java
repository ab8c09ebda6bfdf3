package io.quarkiverse.mysqllock.runtime.named;

import java.sql.Connection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A connection kept out of the pool while it holds named locks: one server session. Every statement on it, and every
 * change to the locks it holds, happens under {@link #mutex}.
 * <p>
 * A session is either a thread's own (the locks it waited for, and every later lock of that thread while it holds
 * any) or shared (locks granted at once, of any thread; several locks of several threads on one connection).
 */
final class PinnedSession {

    final Connection pooled;
    final Connection raw;
    /** The thread whose acquisitions use this session while it holds locks; null for a shared or asynchronous one. */
    final Thread affinity;
    /** Lent to every thread for locks the server grants at once; stays pinned a moment after its last lock. */
    final boolean shared;
    final ReentrantLock mutex = new ReentrantLock();
    final boolean autoCommitWasOff;
    final int originalNetworkTimeout;

    /** Server name to lock; guarded by the mutex. */
    final Map<String, NamedLock> held = new LinkedHashMap<>();
    /** The server session id, known after the first statement; guarded by the mutex. */
    long connectionId;
    /** Set once the session went back to the pool or was discarded; guarded by the mutex. */
    boolean retired;
    /** Which held lock the next keepalive samples; guarded by the mutex. */
    int checks;
    /** {@link System#nanoTime()} of the last acquisition or release on it. */
    volatile long lastUsed = System.nanoTime();

    PinnedSession(Connection pooled, Connection raw, Thread affinity, boolean shared, boolean autoCommitWasOff,
            int originalNetworkTimeout) {
        this.pooled = pooled;
        this.raw = raw;
        this.affinity = affinity;
        this.shared = shared;
        this.autoCommitWasOff = autoCommitWasOff;
        this.originalNetworkTimeout = originalNetworkTimeout;
    }
}
