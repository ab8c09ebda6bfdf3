package io.quarkiverse.mysqllock.runtime.named;

/**
 * Whether the engine is shut down: set once by {@link NamedLockEngine#close()}, read before every acquisition and
 * server query, and again by a grant, which is given back if it came after the shutdown.
 */
final class ShutdownFlag {

    private volatile boolean closed;

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
}
