package io.quarkiverse.mysqllock.runtime.named;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Each thread's own session: a thread waits on a session of its own, and keeps using it while it holds locks there,
 * so that the server sees (and breaks) deadlocks between the locks on it. A session is listed here from its first
 * grant until it is retired or discarded.
 */
final class ThreadSessions {

    private final ConcurrentHashMap<Thread, PinnedSession> affinity = new ConcurrentHashMap<>();

    /** Whether the thread has a session of its own now: its further locks then go there, never to a shared one. */
    boolean has(Thread thread) {
        return affinity.containsKey(thread);
    }

    /** The session's first lock was granted: the thread's further locks go there. */
    void put(Thread thread, PinnedSession session) {
        affinity.put(thread, session);
    }

    /** The session is retired or discarded: its thread no longer has it. */
    void forget(PinnedSession session) {
        if (session.affinity != null) {
            affinity.remove(session.affinity, session);
        }
    }

    /**
     * The calling thread's session, locked ({@link PinnedSession#lock}), or null if it has none that can still be used for this
     * name: a
     * session that holds the name already (for a hold the thread's call no longer owns, such as one waiting for its
     * late release) would grant it again, since named locks are re-entrant per session.
     */
    PinnedSession.Guard lockAffineSession(Thread me, String serverName) {
        PinnedSession session = affinity.get(me);
        if (session == null) {
            return null;
        }
        PinnedSession.Guard locked = session.lock();
        if (session.retired || session.held().containsKey(serverName)) {
            locked.close();
            return null;
        }
        return locked;
    }
}
