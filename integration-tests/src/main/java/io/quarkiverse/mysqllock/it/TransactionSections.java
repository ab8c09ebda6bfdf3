package io.quarkiverse.mysqllock.it;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import io.quarkiverse.mysqllock.Locked;

/**
 * The transaction workload's ways of writing under a lock in a JTA transaction ({@link TransactionWorker}): each
 * writes under the lock, then works on a while (the tail) before the transaction commits: after the lock's release
 * when a {@code @Transactional} method calls a {@code @Locked} one, inside it when both are on one method.
 */
@Singleton
public class TransactionSections {

    /** The write under the lock. */
    @FunctionalInterface
    public interface Write {
        void run();
    }

    @Inject
    FaultSections locked;

    /** A {@code @Transactional} method that calls a {@code @Locked} one, then works on: the commit comes after. */
    @Transactional
    public void lockedThenTail(String name, Write write, long tailMillis) {
        locked.lockedPlainly(name, write::run);
        TransactionWorker.tail(tailMillis);
    }

    /** Both annotations on one method: the tail is inside the lock. */
    @Transactional
    @Locked(value = "{name}", waitFor = "1s")
    public void transactionalLocked(String name, Write write, long tailMillis) {
        write.run();
        TransactionWorker.tail(tailMillis);
    }
}
