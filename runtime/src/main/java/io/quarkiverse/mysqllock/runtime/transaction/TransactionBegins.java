package io.quarkiverse.mysqllock.runtime.transaction;

import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionScoped;

/**
 * A transaction begun by a thread that holds fenced locks (a {@code @Transactional} method called from a
 * {@code @Locked} one) checks their fences before it commits, as one begun before the lock was taken does.
 */
@Singleton
public class TransactionBegins {

    @Inject
    TransactionManager transactions;

    void begun(@Observes @Initialized(TransactionScoped.class) Object transaction) {
        if (TransactionBoundHandle.holdsFencedLocks()) {
            java.util.Optional.ofNullable(Transactions.of(transactions).open())
                    .ifPresent(TransactionBoundHandle::transactionBegun);
        }
    }
}
