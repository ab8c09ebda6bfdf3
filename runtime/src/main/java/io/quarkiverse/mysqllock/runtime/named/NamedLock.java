package io.quarkiverse.mysqllock.runtime.named;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import io.quarkiverse.mysqllock.LockLostException;

/**
 * One lock the server granted to one pinned session, shared by the nested holds of its owner thread. Its mutable
 * state is guarded by the session's mutex, except {@link #lost}, which any thread may read.
 */
final class NamedLock {

    final String name;
    final String serverName;
    final PinnedSession session;
    final Thread owner;
    final Instant since;
    private final List<Consumer<LockLostException>> listeners = new CopyOnWriteArrayList<>();

    /** Nested holds not yet released; guarded by the session mutex. */
    int holds = 1;
    /** 0 until a holder asks for it; guarded by the session mutex. */
    long fence;
    /** Set once, when the server no longer holds the lock for us. */
    volatile LockLostException lost;
    /** Set once, when the last hold was released. */
    volatile boolean released;

    NamedLock(String name, String serverName, PinnedSession session, Thread owner, Instant since) {
        this.name = name;
        this.serverName = serverName;
        this.session = session;
        this.owner = owner;
        this.since = since;
    }

    boolean isHeld() {
        return lost == null && !released;
    }

    /** Registers a listener; returns false if the lock is already lost (the caller then calls it itself). */
    boolean addListener(Consumer<LockLostException> listener) {
        listeners.add(listener);
        if (lost != null && listeners.remove(listener)) {
            return false;
        }
        return true;
    }

    /** Marks the lock lost; returns the listeners to notify, each exactly once. */
    List<Consumer<LockLostException>> markLost(LockLostException cause) {
        if (lost != null || released) {
            return List.of();
        }
        lost = cause;
        List<Consumer<LockLostException>> toNotify = List.copyOf(listeners);
        listeners.removeAll(toNotify);
        return toNotify;
    }
}
