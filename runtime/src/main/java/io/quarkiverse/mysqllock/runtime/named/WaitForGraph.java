package io.quarkiverse.mysqllock.runtime.named;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.quarkiverse.mysqllock.runtime.engine.Refusals;

/**
 * The lock each of this instance's threads waits for on the server now, and the refusal of a wait that would close a
 * cycle among them: the server sees only cycles among the locks of waiting sessions, and shared sessions never wait.
 * The map is guarded by its own monitor.
 */
final class WaitForGraph {

    /** The lock each thread waits for on the server now; guarded by itself. */
    private final Map<Thread, String> waitingFor = new HashMap<>();
    private final NameRegistry names;

    WaitForGraph(NameRegistry names) {
        this.names = names;
    }

    /**
     * Registers the thread as waiting for a lock and refuses the wait if that closes a cycle among this instance's
     * threads: the server sees only cycles among the locks of waiting sessions, and shared sessions never wait.
     */
    void startWaiting(Thread me, String name, String serverName) {
        synchronized (waitingFor) {
            String next = serverName;
            for (int step = 0; step < 1_000; step++) {
                NamedLock holder = names.get(next);
                Thread owner = holder == null ? null : holder.owner();
                if (owner == null || !holder.isHeld()) {
                    break;
                }
                if (owner == me) {
                    throw Refusals.deadlock(name, Duration.ZERO, "this instance detected a deadlock among its threads",
                            null);
                }
                next = waitingFor.get(owner);
                if (next == null) {
                    break;
                }
            }
            waitingFor.put(me, serverName);
        }
    }

    void stopWaiting(Thread me) {
        synchronized (waitingFor) {
            waitingFor.remove(me);
        }
    }
}
