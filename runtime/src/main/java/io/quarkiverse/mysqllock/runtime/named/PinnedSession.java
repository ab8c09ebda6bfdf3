package io.quarkiverse.mysqllock.runtime.named;

import java.sql.Connection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;

/**
 * A connection kept out of the pool while it holds named locks: one server session. Every statement on it, and every
 * change to the locks it holds, happens under its lock, which one place takes ({@link #lock}, {@link #tryLock}) and
 * whoever holds the returned {@link Guard} gives back ({@link Guard#close}); the state it guards is reachable only
 * through methods that check the calling thread holds it.
 * <p>
 * A session is either a thread's own (the locks it waited for, and every later lock of that thread while it holds
 * any) or shared (locks granted at once, of any thread; several locks of several threads on one connection).
 */
final class PinnedSession {

    final Connection pooled;
    final Connection raw;
    final ServerVersion server;
    /** The thread whose acquisitions use this session while it holds locks; null for a shared or asynchronous one. */
    final Thread affinity;
    /** Lent to every thread for locks the server grants at once; stays pinned a moment after its last lock. */
    final boolean shared;
    private final ReentrantLock mutex = new ReentrantLock();
    final boolean autoCommitWasOff;
    /** The network time-out the pool lent the connection with, restored when it goes back. */
    final int originalNetworkTimeout;
    /** Set while a keepalive check of it runs, so that a stalled one is not checked twice at once. */
    final AtomicBoolean checking = new AtomicBoolean();

    /** Server name to lock; guarded by the mutex. */
    private final Map<String, NamedLock> held = new LinkedHashMap<>();
    /** The server session id, known after the first statement; written under the mutex. */
    volatile long connectionId;
    /**
     * Set once the session went back to the pool or was discarded: under the mutex, or without it when a statement holds
     * the mutex and the session is ended under it (the statement's grant is then void).
     */
    volatile boolean retired;
    /**
     * Set by whoever hands the connection back (to the pool, or discarded): exactly once, also when a session is ended
     * under a statement while the statement's thread retires it.
     */
    final AtomicBoolean handedBack = new AtomicBoolean();
    /** Which held lock the next keepalive samples; guarded by the mutex. */
    private int checks;
    /** {@link System#nanoTime()} of the last check of its locks (or of its pinning); guarded by the mutex. */
    private long lastChecked = System.nanoTime();
    /**
     * {@link System#nanoTime()} when the last statement that found this session still holding its locks was sent (the
     * server's state then or later): a keepalive check, or a {@code GET_LOCK} that found it the same session on a
     * writable server; meaningful once {@link #confirmed}. Written under the mutex.
     */
    volatile long confirmedAt;
    volatile boolean confirmed;
    /** {@link System#nanoTime()} of the last acquisition or release on it. */
    volatile long lastUsed = System.nanoTime();

    PinnedSession(Connection pooled, Connection raw, ServerVersion server, Thread affinity, boolean shared,
            boolean autoCommitWasOff, int originalNetworkTimeout) {
        this.pooled = pooled;
        this.raw = raw;
        this.server = server;
        this.affinity = affinity;
        this.shared = shared;
        this.autoCommitWasOff = autoCommitWasOff;
        this.originalNetworkTimeout = originalNetworkTimeout;
    }

    /**
     * The session's lock, held by the thread that took it: every statement on the session and every change of its
     * locks happens while one is open. {@link #close} gives it back, once, on that thread: one guard per taking, so
     * that a second close cannot give back a hold of the same thread taken elsewhere.
     */
    final class Guard implements AutoCloseable {

        /** Only the taking thread reads and writes it. */
        private boolean closed;

        private Guard() {
        }

        PinnedSession session() {
            return PinnedSession.this;
        }

        @Override
        public void close() {
            if (closed) {
                throw new IllegalStateException("A pinned session's lock was given back twice");
            }
            closed = true;
            mutex.unlock();
        }
    }

    /** Takes the session's lock, waiting as long as a statement on it runs. */
    Guard lock() {
        mutex.lock();
        return new Guard();
    }

    /** The session's lock if it is free now; null while a statement holds it. */
    Guard tryLock() {
        return mutex.tryLock() ? new Guard() : null;
    }

    /** The session's lock if it comes free within the time-out; null otherwise. */
    Guard tryLock(long timeout, TimeUnit unit) throws InterruptedException {
        return mutex.tryLock(timeout, unit) ? new Guard() : null;
    }

    /** Whether a thread holds the session's lock (a statement runs on it), for diagnostics. */
    boolean inStatement() {
        return mutex.isLocked();
    }

    /** The locks the session holds, by server name: under its lock only. */
    Map<String, NamedLock> held() {
        assert mutex.isHeldByCurrentThread() : "the locks of a pinned session are read and changed under its lock";
        return held;
    }

    /**
     * Whether it holds no lock, read without its lock: a hint that a decision under the lock confirms (a session that
     * seems idle is then looked at under it).
     */
    boolean seemsEmpty() {
        return held.isEmpty();
    }

    /** The index of the next lock a keepalive check samples; under the session's lock. */
    int nextCheck() {
        assert mutex.isHeldByCurrentThread() : "a pinned session's checks are counted under its lock";
        return checks++;
    }

    /** {@link System#nanoTime()} of the last check of its locks (or of its pinning); under the session's lock. */
    long lastChecked() {
        assert mutex.isHeldByCurrentThread() : "a pinned session's checks are timed under its lock";
        return lastChecked;
    }

    void checked(long sentAt) {
        assert mutex.isHeldByCurrentThread() : "a pinned session's checks are timed under its lock";
        lastChecked = sentAt;
    }
}
