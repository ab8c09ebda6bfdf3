package io.quarkiverse.mysqllock;

import java.sql.Connection;

/**
 * The receiving end of fencing tokens sent by other services ({@link LockFence}): admits a write only if no newer token
 * of its lock came first, and keeps the newest token of each lock in this service's own lock table (in memory with
 * in-memory locks). Injectable; {@link Fenced} uses it for REST methods, and a message consumer calls it with the token
 * a message carries.
 * <p>
 * Tokens are compared per lock, and only tokens issued by one lock table compare: every caller of a fenced resource
 * must take the lock from the same database.
 */
public interface FenceGuard {

    /**
     * Admits {@code fence}, and records its token as its lock's newest. Inside a JTA transaction, the check and the
     * record are part of it, on the lock datasource's connection of the transaction: a newer token waits for its commit,
     * and a rollback forgets the record. Without one, on a connection of its own.
     *
     * @throws FenceRefusedException if a newer token of the lock was admitted before
     */
    void admit(LockFence fence);

    /**
     * The same, in the transaction of {@code connection}, a connection to the lock datasource's database that the caller
     * manages (autocommit off): a newer token waits for its commit.
     *
     * @throws FenceRefusedException if a newer token of the lock was admitted before
     */
    void admit(LockFence fence, Connection connection);

    /** The newest token admitted for {@code lock}, 0 if none. */
    long newest(String lock);
}
