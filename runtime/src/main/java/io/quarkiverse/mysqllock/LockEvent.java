package io.quarkiverse.mysqllock;

import java.time.Duration;

/**
 * What happened to a lock of this instance, as a CDI event: observe it to log, count or alert in one place instead of
 * a listener on every handle.
 *
 * <pre>
 * void onLoss(&#64;Observes LockEvent event) {
 *     if (event.kind() == LockEvent.Kind.LOST) {
 *         alerts.raise("lock " + event.name() + " lost: " + event.loss().getMessage());
 *     }
 * }
 * </pre>
 *
 * Fired only when the application observes it (nothing is built otherwise). Synchronous observers run on the acquiring
 * or releasing thread, and for a loss on a thread of the extension's that tells holders of their losses: keep them
 * short, or use {@code @ObservesAsync}, which gets the same events, though not necessarily in order. Each hold ends with
 * exactly one event: {@code LOST} (a loss that the release itself finds included) or {@code RELEASED}. An observer that
 * throws is logged and changes nothing for the lock.
 *
 * @param kind what happened
 * @param name the lock name, as the application gave it
 * @param engine the engine that holds it
 * @param holder this instance, as the lock shows it to others ({@code host/pid/instance-id})
 * @param fencingToken the hold's fencing token where it is known without a statement (LEASE), 0 otherwise (NAMED issues
 *        it on the first {@link LockHandle#fencingToken()} call)
 * @param waited ACQUIRED: how long the acquisition waited; zero otherwise
 * @param held RELEASED and LOST: how long the lock had been held; zero for ACQUIRED
 * @param loss LOST: why; null otherwise
 */
public record LockEvent(Kind kind, String name, LockMode engine, String holder, long fencingToken, Duration waited,
        Duration held, LockLostException loss) {

    /** What happened. */
    public enum Kind {
        /** Granted to this instance. */
        ACQUIRED,
        /** Released by its holder (a nested hold counts when it is released). */
        RELEASED,
        /** Lost while held: the holder is told through {@link LockHandle#onLost} too. */
        LOST
    }
}
