package io.quarkiverse.mysqllock.runtime.lease;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * In-JVM exclusion per lock name, in front of the table: of the threads of one instance that want one name, only one
 * polls the database; the others wait here and get the gate the moment the holder releases. Not bound to a thread, so
 * a lease may be released from any thread.
 */
final class LocalGate {

    private final Semaphore permit = new Semaphore(1, true);
    /** Threads that entered and have not left; guarded by the map's compute. */
    private int users;

    /** The gates in use, by server name; a gate disappears when its last user leaves. */
    static final class Gates {
        private final ConcurrentHashMap<String, LocalGate> gates = new ConcurrentHashMap<>();

        LocalGate enter(String serverName) {
            return gates.compute(serverName, (key, gate) -> {
                LocalGate entered = gate == null ? new LocalGate() : gate;
                entered.users++;
                return entered;
            });
        }

        void leave(String serverName, LocalGate gate) {
            gates.computeIfPresent(serverName, (key, current) -> current != gate || --current.users > 0 ? current : null);
        }

        int size() {
            return gates.size();
        }
    }

    boolean pass(long timeoutNanos) throws InterruptedException {
        return permit.tryAcquire(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
    }

    void open() {
        permit.release();
    }
}
