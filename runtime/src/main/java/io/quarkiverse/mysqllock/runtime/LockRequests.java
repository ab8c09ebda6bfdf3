package io.quarkiverse.mysqllock.runtime;

import java.time.Duration;

import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.runtime.engine.LockName;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.Owner;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * The one request builder of a manager: every acquisition of a name, from the API or from {@code @Locked}, is checked and
 * turned into the engine's {@link LockRequest} here, with the same defaults for all.
 */
final class LockRequests {

    /** Longer waits are cut to this; it keeps deadline arithmetic far from overflow. */
    static final Duration MAX_WAIT = Duration.ofDays(365);

    private final LockNames names;
    private final Duration defaultWait;

    LockRequests(LockNames names, Duration defaultWait) {
        this.names = names;
        this.defaultWait = defaultWait;
    }

    /**
     * Checks the name and the options, refuses to block an event loop, and says what the engine is asked. A blocking
     * caller ({@code method} named, for messages) owns its hold and nests as its options say; an asynchronous one
     * ({@code method} null) acquires on a worker thread that owns nothing.
     */
    LockRequest request(String method, String name, LockOptions options, WhenBusy whenBusy) {
        LockName lock = names.resolve(name);
        LockOptions checked = checked(options);
        long waitNanos = waitNanos(checked.waitTime().orElse(defaultWait));
        if (method != null) {
            checkBlockingAllowed(method);
        }
        Owner owner = method != null && checked.nesting() ? Owner.CALLING_THREAD : Owner.NONE;
        return LockRequest.of(lock, waitNanos).whenBusy(whenBusy).ownedBy(owner).atMostFor(checked.atMostFor());
    }

    /** The options of a plain wait ({@code null} refused with the wait's own message). */
    static LockOptions waiting(Duration wait) {
        waitNanos(wait);
        return LockOptions.waitingUpTo(wait);
    }

    static LockOptions checked(LockOptions options) {
        if (options == null) {
            throw new IllegalArgumentException("Lock options must not be null; use LockOptions.defaults()");
        }
        return options;
    }

    static void requireAction(String method, Object action) {
        if (action == null) {
            throw new IllegalArgumentException(method + " action must not be null");
        }
    }

    static long waitNanos(Duration wait) {
        if (wait == null) {
            throw new IllegalArgumentException("Lock wait must not be null; use Duration.ZERO for a single attempt");
        }
        if (wait.isNegative()) {
            throw new IllegalArgumentException("Lock wait must not be negative, got " + wait);
        }
        return (wait.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : wait).toNanos();
    }

    static void checkBlockingAllowed(String method) {
        if (!BlockingOperationControl.isBlockingAllowed()) {
            throw new IllegalStateException("LockManager." + method + " blocks on the database and was called on an"
                    + " event-loop thread (" + Thread.currentThread().getName() + "). Use acquireAsync, or run the"
                    + " code on a worker thread (@Blocking, @RunOnVirtualThread)");
        }
    }
}
