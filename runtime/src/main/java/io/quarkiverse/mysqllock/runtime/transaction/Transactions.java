package io.quarkiverse.mysqllock.runtime.transaction;

import jakarta.transaction.RollbackException;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.SystemException;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;

import org.jboss.logging.Logger;

/**
 * The JTA transactions a lock's release waits for: a lock released while a transaction is open is released once that
 * transaction has committed or rolled back, so that the commit happens while the lock is still held.
 */
public final class Transactions {

    private static final Logger LOG = Logger.getLogger(Transactions.class);

    /** No transaction manager: every release happens at once. */
    public static final Transactions NONE = new Transactions(null);

    private final TransactionManager manager;

    private Transactions(TransactionManager manager) {
        this.manager = manager;
    }

    /** @param manager the application's transaction manager, or null where there is none */
    public static Transactions of(TransactionManager manager) {
        return manager == null ? NONE : new Transactions(manager);
    }

    /** The transaction open on the calling thread (active, or marked rollback-only), or null. */
    public Transaction open() {
        if (manager == null) {
            return null;
        }
        try {
            Transaction transaction = manager.getTransaction();
            return transaction != null && isOpen(transaction) ? transaction : null;
        } catch (SystemException | RuntimeException e) {
            return null;
        }
    }

    /** Whether the transaction has not ended yet: neither committed nor rolled back, nor on its way to either. */
    public static boolean isOpen(Transaction transaction) {
        try {
            int status = transaction.getStatus();
            return status == Status.STATUS_ACTIVE || status == Status.STATUS_MARKED_ROLLBACK;
        } catch (SystemException | RuntimeException e) {
            return false;
        }
    }

    /** Whether the transaction is active: neither marked rollback-only nor ending. */
    static boolean isActive(Transaction transaction) {
        try {
            return transaction.getStatus() == Status.STATUS_ACTIVE;
        } catch (SystemException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Runs {@code action} once the transaction has ended, committed or rolled back, on the thread that ends it.
     *
     * @return false if the transaction takes no more synchronizations (it is ending, or marked rollback-only: then
     *         nothing of it commits, and the caller runs the action now)
     */
    public static boolean afterCompletion(Transaction transaction, String what, Runnable action) {
        return register(transaction, new Synchronization() {
            @Override
            public void beforeCompletion() {
            }

            @Override
            public void afterCompletion(int status) {
                try {
                    action.run();
                } catch (RuntimeException | Error e) {
                    LOG.warnf(e, "%s after its transaction ended failed", what);
                }
            }
        });
    }

    /**
     * Runs {@code check} as the transaction is about to commit, on the committing thread with the transaction open (what
     * it throws rolls the transaction back), and {@code after} once it has ended.
     *
     * @return false if the transaction takes no more synchronizations (it is ending, or marked rollback-only)
     */
    static boolean around(Transaction transaction, Runnable check, Runnable after) {
        return register(transaction, new Synchronization() {
            @Override
            public void beforeCompletion() {
                check.run();
            }

            @Override
            public void afterCompletion(int status) {
                after.run();
            }
        });
    }

    private static boolean register(Transaction transaction, Synchronization synchronization) {
        try {
            transaction.registerSynchronization(synchronization);
            return true;
        } catch (RollbackException | IllegalStateException | SystemException e) {
            return false;
        }
    }

    /** Marks the transaction rollback-only: nothing of it commits. */
    static void rollbackOnly(Transaction transaction) {
        try {
            transaction.setRollbackOnly();
        } catch (IllegalStateException | SystemException e) {
            LOG.debugf(e, "A transaction that ran under a lost lock could not be marked rollback-only (it is ending)");
        }
    }
}
