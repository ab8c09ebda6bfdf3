package io.quarkiverse.mysqllock.runtime.named;

import java.sql.Connection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A connection kept out of the pool while it holds named locks: one server session. Every statement on it, and every
 * change to the locks it holds, happens under {@link #mutex}.
 */
final class PinnedSession {

    final Connection pooled;
    final Connection raw;
    /** The thread whose acquisitions use this session while it holds locks; null for an asynchronous hold's own. */
    final Thread affinity;
    final ReentrantLock mutex = new ReentrantLock();
    final boolean autoCommitWasOff;
    final int originalNetworkTimeout;

    /** Server name to lock; guarded by the mutex. */
    final Map<String, NamedLock> held = new LinkedHashMap<>();
    /** The server session id, known after the first statement; guarded by the mutex. */
    long connectionId;
    /** Set once the session went back to the pool or was discarded; guarded by the mutex. */
    boolean retired;

    PinnedSession(Connection pooled, Connection raw, Thread affinity, boolean autoCommitWasOff, int originalNetworkTimeout) {
        this.pooled = pooled;
        this.raw = raw;
        this.affinity = affinity;
        this.autoCommitWasOff = autoCommitWasOff;
        this.originalNetworkTimeout = originalNetworkTimeout;
    }
}
