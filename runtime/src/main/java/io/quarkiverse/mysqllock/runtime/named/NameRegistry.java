package io.quarkiverse.mysqllock.runtime.named;

import java.sql.SQLException;
import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;

import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.GrantingEngine;
import io.quarkiverse.mysqllock.runtime.engine.HoldHandle;

/**
 * The names this instance holds, one {@link NamedLock} per server name whatever session holds it: the in-JVM
 * exclusion, which comes before any shared session (where the server would grant a name again), and the re-entrancy of
 * the owner thread's call, which nests onto its lock without a statement. An entry is added under its session's mutex
 * and removed under it, or by whoever ends the session under a statement that holds it; reads need no lock.
 * <p>
 * Closed once by {@link NamedLockEngine#close()}: read before every acquisition and server query, and again by a
 * grant, which is given back if it came after the shutdown.
 */
final class NameRegistry {

    private final ConcurrentHashMap<String, NamedLock> local = new ConcurrentHashMap<>();
    private final String identity;
    /** The engine, which the handles made here call back to release their holds ({@link GrantingEngine} only). */
    private final GrantingEngine<NamedLock> engine;
    private volatile boolean closed;

    NameRegistry(String identity, GrantingEngine<NamedLock> engine) {
        this.identity = identity;
        this.engine = engine;
    }

    boolean isClosed() {
        return closed;
    }

    void markClosed() {
        closed = true;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("The lock manager is shut down");
        }
    }

    NamedLock get(String serverName) {
        return local.get(serverName);
    }

    /** Maps the name to the lock; the lock it mapped to before, if any. */
    NamedLock put(String serverName, NamedLock lock) {
        return local.put(serverName, lock);
    }

    /** Removes the name if {@code lock} is what it maps to; whether it was. */
    boolean remove(String serverName, NamedLock lock) {
        return local.remove(serverName, lock);
    }

    /** A live view of the locks. */
    Collection<NamedLock> values() {
        return local.values();
    }

    int size() {
        return local.size();
    }

    /** A nested hold on the lock the thread's own call holds, or null if it holds none by that name. */
    ControlledHandle nest(Thread me, String serverName) {
        NamedLock mine = local.get(serverName);
        if (mine == null || !mine.ownedBy(me)) {
            return null;
        }
        PinnedSession session = mine.session;
        try (PinnedSession.Guard locked = session.lock()) {
            if (!mine.isHeld() || session.retired) {
                return null;
            }
            mine.holds++;
            return new HoldHandle<>(mine, engine, me);
        }
    }

    /** Who holds a name the session found busy: this instance's holder if it is one, else the server's connection. */
    String describeHolder(PinnedSession session, String serverName) throws SQLException {
        NamedLock mine = local.get(serverName);
        if (mine != null && mine.isHeld()) {
            return describeLocal(mine);
        }
        Long holder = SessionStatements.holderOf(session.raw, serverName);
        return holder == null ? null : "server connection " + holder;
    }

    String describeLocal(NamedLock lock) {
        Thread owner = lock.owner();
        return identity + " (server connection " + lock.session.connectionId
                + (owner == null ? ", asynchronous or handed over" : ", thread '" + owner.getName() + "'") + ")";
    }
}
