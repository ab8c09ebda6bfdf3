package io.quarkiverse.mysqllock;

/** The lock engine. */
public enum LockMode {
    /** {@code GET_LOCK} on a connection pinned out of the pool while the lock is held. */
    NAMED,
    /** A lock table with server-time leases, renewed by a watchdog. */
    LEASE
}
