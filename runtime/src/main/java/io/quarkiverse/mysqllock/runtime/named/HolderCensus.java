package io.quarkiverse.mysqllock.runtime.named;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.table.LockTable;

/**
 * Who holds which name, for the API's queries and the admin API: this instance's own holds first, described from
 * {@link NameRegistry}, then what the server shows, read on a pooled connection (never a pinned one). Also describes the
 * connections this engine keeps out of the pool, for diagnostics.
 */
final class HolderCensus {

    private static final Logger LOG = Logger.getLogger(NamedLockEngine.class);
    private static final int NAMES_PER_CHECK = SessionStatements.NAMES_PER_CHECK;

    private final ConnectionSource connections;
    private final LockTable table;
    private final NameRegistry names;
    private final PinnedSessions pinned;
    private final SharedSessions shared;

    HolderCensus(ConnectionSource connections, LockTable table, NameRegistry names,
            PinnedSessions pinned, SharedSessions shared) {
        this.connections = connections;
        this.table = table;
        this.names = names;
        this.pinned = pinned;
        this.shared = shared;
    }

    // --- one name ---

    boolean isLocked(String name, String serverName) {
        NamedLock mine = names.get(serverName);
        if (mine != null && mine.isHeld()) {
            return true;
        }
        return serverHolder(name, serverName) != null;
    }

    Optional<LockInfo> inspect(String name, String serverName) {
        NamedLock mine = names.get(serverName);
        if (mine != null && mine.isHeld()) {
            return Optional.of(info(mine));
        }
        Long holder = serverHolder(name, serverName);
        return holder == null ? Optional.empty()
                : Optional.of(new LockInfo(name, "server connection " + holder, null, 0, LockMode.NAMED));
    }

    private Long serverHolder(String name, String serverName) {
        names.ensureOpen();
        return connections.query(name, "read the state of lock '" + name + "'",
                raw -> SessionStatements.holderOf(raw, serverName));
    }

    // --- this instance's ---

    List<LockInfo> held() {
        List<LockInfo> infos = new ArrayList<>();
        for (NamedLock lock : names.values()) {
            if (lock.isHeld()) {
                infos.add(info(lock));
            }
        }
        return infos;
    }

    private LockInfo info(NamedLock lock) {
        return new LockInfo(lock.name, names.describeLocal(lock), lock.since, lock.fence, LockMode.NAMED);
    }

    // --- every holder the server knows of ---

    List<LockInfo> holders() {
        names.ensureOpen();
        Map<String, Long> onServer = connections.query("(holders)", "list the lock holders", this::namedLocksOnServer);
        Map<Long, PinnedSession> ours = new HashMap<>();
        for (PinnedSession session : pinned.all()) {
            ours.put(session.connectionId, session);
        }
        List<LockInfo> infos = new ArrayList<>();
        for (Map.Entry<String, Long> entry : new TreeMap<>(onServer).entrySet()) {
            NamedLock mine = names.get(entry.getKey());
            if (mine != null && mine.isHeld() && ours.containsKey(entry.getValue())) {
                infos.add(new LockInfo(entry.getKey(), names.describeLocal(mine), mine.since, mine.fence, LockMode.NAMED));
            } else {
                infos.add(new LockInfo(entry.getKey(), "server connection " + entry.getValue(), null, 0, LockMode.NAMED));
            }
        }
        return infos;
    }

    /**
     * Named locks and their holders' connection ids: from the server's lock tables where it has them, else the names the
     * lock table knows, each checked with {@code IS_USED_LOCK}.
     */
    private Map<String, Long> namedLocksOnServer(Connection raw) throws SQLException {
        // MySQL 5.7+ (and MariaDB 10.5.2+ when the metadata lock instrument is enabled)
        Map<String, Long> held = namedLocksFrom(raw, "SELECT m.OBJECT_NAME, t.PROCESSLIST_ID"
                + " FROM performance_schema.metadata_locks m JOIN performance_schema.threads t"
                + " ON t.THREAD_ID = m.OWNER_THREAD_ID WHERE m.OBJECT_TYPE = 'USER LEVEL LOCK' AND m.LOCK_STATUS = 'GRANTED'");
        if (held != null && (!held.isEmpty() || metadataLocksInstrumented(raw))) {
            return held;
        }
        // MariaDB with the metadata_lock_info plugin
        held = namedLocksFrom(raw, "SELECT TABLE_SCHEMA, THREAD_ID FROM information_schema.METADATA_LOCK_INFO"
                + " WHERE LOCK_TYPE = 'User lock'");
        return held != null ? held : namedLocksOfKnownNames(raw);
    }

    /** The named locks a server table lists, or null if the server has no such table or does not let us read it. */
    private static Map<String, Long> namedLocksFrom(Connection raw, String sql) throws SQLException {
        Map<String, Long> held = new HashMap<>();
        try (Statement statement = raw.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            while (rs.next()) {
                held.put(rs.getString(1), rs.getLong(2));
            }
            return held;
        } catch (SQLException e) {
            if (SqlErrors.isConnectionFailure(e)) {
                throw e;
            }
            LOG.debugf("Cannot list named locks with [%s]: %s", sql, e.getMessage());
            return null;
        }
    }

    private static boolean metadataLocksInstrumented(Connection raw) throws SQLException {
        Map<String, Long> enabled = namedLocksFrom(raw, "SELECT NAME, 1 FROM performance_schema.setup_instruments"
                + " WHERE NAME = 'wait/lock/metadata/sql/mdl' AND ENABLED = 'YES'");
        return enabled != null && !enabled.isEmpty();
    }

    private Map<String, Long> namedLocksOfKnownNames(Connection raw) throws SQLException {
        List<String> known = table.knownNames(raw);
        for (NamedLock lock : names.values()) {
            if (!known.contains(lock.serverName)) {
                known.add(lock.serverName);
            }
        }
        Map<String, Long> held = new HashMap<>();
        for (int from = 0; from < known.size(); from += NAMES_PER_CHECK) {
            List<String> chunk = known.subList(from, Math.min(known.size(), from + NAMES_PER_CHECK));
            long[] holders = SessionStatements.isUsedLocks(raw, chunk);
            for (int i = 0; i < chunk.size(); i++) {
                if (holders[i + 2] != 0) {
                    held.put(chunk.get(i), holders[i + 2]);
                }
            }
        }
        return held;
    }

    // --- the pinned connections ---

    /** The number of connections this engine keeps out of the pool now. */
    int pinnedConnections() {
        return pinned.size();
    }

    /** What each connection kept out of the pool holds and why it is kept, for diagnostics. */
    List<String> describePinned() {
        List<String> described = new ArrayList<>();
        for (PinnedSession session : pinned.all()) {
            described.add("server session " + session.connectionId
                    + (session.shared ? shared.contains(session) ? ", shared" : ", shared but not listed as such" : "")
                    + (session.affinity == null ? "" : ", of thread '" + session.affinity.getName() + "'")
                    + (session.retired ? ", retired" : "") + (session.checking.get() ? ", being checked" : "")
                    + (session.inStatement() ? ", in a statement" : "") + ", idle for "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - session.lastUsed) + " ms, holding "
                    + heldNames(session));
        }
        return described;
    }

    /** The names a session holds, read under its lock; not read while a statement holds it. */
    private static String heldNames(PinnedSession session) {
        PinnedSession.Guard locked = session.tryLock();
        if (locked == null) {
            return "(not read: in a statement)";
        }
        try (locked) {
            return List.copyOf(session.held().keySet()).toString();
        }
    }
}
