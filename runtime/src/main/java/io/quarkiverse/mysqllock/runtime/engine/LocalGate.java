package io.quarkiverse.mysqllock.runtime.engine;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * In-JVM exclusion per lock name, in front of the database: of the threads of one instance that want one name, only one
 * goes to the server (LEASE: the one that polls the table; NAMED: the one whose session waits in GET_LOCK); the others
 * wait here, in the order they came, and get the gate the moment it is let go. Not bound to a thread, so it may be let
 * go from any thread.
 */
public final class LocalGate {

    private final Semaphore permit = new Semaphore(1, true);
    /** Threads that entered and have not left; guarded by the map's compute. */
    private int users;

    /** The gates in use, by server name; a gate disappears when its last user leaves. */
    public static final class Gates {
        private final ConcurrentHashMap<String, LocalGate> gates = new ConcurrentHashMap<>();

        public LocalGate enter(String serverName) {
            return gates.compute(serverName, (key, gate) -> {
                LocalGate entered = gate == null ? new LocalGate() : gate;
                entered.users++;
                return entered;
            });
        }

        public void leave(String serverName, LocalGate gate) {
            gates.computeIfPresent(serverName, (key, current) -> current != gate || --current.users > 0 ? current : null);
        }

        public int size() {
            return gates.size();
        }
    }

    /** Waits for the gate up to the time-out; whether it passed. */
    public boolean pass(long timeoutNanos) throws InterruptedException {
        return permit.tryAcquire(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
    }

    /** Lets the gate go: the next thread waiting passes. */
    public void open() {
        permit.release();
    }
}
