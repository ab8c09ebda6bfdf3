package io.quarkiverse.mysqllock.runtime.transaction;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.function.UnaryOperator;

import jakarta.transaction.Transaction;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.ForwardingEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockEngine;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;

/**
 * The engine as the API sees it: every hold it grants releases after the JTA transaction it is released in
 * ({@link TransactionBoundHandle}). The outermost engine, so that a release's event, metrics and span come when the
 * lock is really released.
 */
public final class TransactionBoundEngine extends ForwardingEngine {

    private final Transactions transactions;
    /** The fence's check, for {@link #fence} and fenced commits; null where there is none (a bare engine). */
    private final FencedCommits fences;
    /** Whether commits are fenced ({@code fenced-commit}): every grant has its token, every commit is checked. */
    private final boolean fencedCommits;

    private TransactionBoundEngine(LockEngine engine, Transactions transactions, FencedCommits fences,
            boolean fencedCommits) {
        super(engine);
        this.transactions = transactions;
        this.fences = fences;
        this.fencedCommits = fencedCommits && fences != null;
    }

    /** {@code engine} bound to the transactions, unless it already is; no fences. */
    public static TransactionBoundEngine of(LockEngine engine, Transactions transactions) {
        return of(engine, transactions, null, false);
    }

    /**
     * @param fences the fence's check of the engine's lock table (or memory)
     * @param fencedCommits whether commits are fenced ({@code quarkus.mysql-lock.fenced-commit})
     */
    public static TransactionBoundEngine of(LockEngine engine, Transactions transactions, FencedCommits fences,
            boolean fencedCommits) {
        return engine instanceof TransactionBoundEngine bound ? bound
                : new TransactionBoundEngine(engine, transactions, fences, fencedCommits);
    }

    /** The transaction open on the calling thread, or null: for an acquisition another thread makes on its behalf. */
    public Transaction openTransaction() {
        return transactions.open();
    }

    @Override
    public ControlledHandle acquire(LockRequest request) {
        return acquire(request, transactions.open(), true);
    }

    /**
     * An acquisition on behalf of a caller on another thread.
     *
     * @param askedIn the transaction open where the caller asked, or null
     */
    public ControlledHandle acquire(LockRequest request, Transaction askedIn) {
        return acquire(request, askedIn, false);
    }

    private ControlledHandle acquire(LockRequest request, Transaction askedIn, boolean ownThread) {
        ControlledHandle handle = engine.acquire(request);
        if (handle == null) {
            return null;
        }
        return new TransactionBoundHandle(handle, transactions, askedIn, request.serverName(),
                fencedCommits ? fences : null, ownThread);
    }

    /**
     * {@link io.quarkiverse.mysqllock.LockManager#fence}: each lock of the handle checked in the connection's
     * transaction.
     */
    public void fence(LockHandle lock, Connection connection, UnaryOperator<String> serverNames) {
        if (fences == null) {
            throw new IllegalStateException("This lock manager has no lock table to fence commits with");
        }
        try {
            if (connection.getAutoCommit()) {
                throw new IllegalStateException("fence(lock, connection) needs the connection's transaction: it is in"
                        + " autocommit mode, where the check's row lock would end at once. Call it inside the"
                        + " transaction (setAutoCommit(false)), after its writes and before its commit");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("fence(lock, connection): the connection cannot be used: " + e.getMessage(),
                    e);
        }
        List<LockHandle> parts = lock.parts();
        for (LockHandle part : parts) {
            if (!part.isValid()) {
                part.fencingToken(); // throws, saying why: released, or lost
            }
        }
        if (!fencedCommits && engine.mode() == LockMode.NAMED) {
            throw new IllegalStateException("fence(lock, connection) on the NAMED engine needs"
                    + " quarkus.mysql-lock.fenced-commit=true on every instance of the fleet: only then does every NAMED"
                    + " grant raise the name's fence, which the check compares");
        }
        long[] tokens = parts.stream().mapToLong(LockHandle::fencingToken).toArray();
        for (int i = 0; i < tokens.length; i++) {
            String name = parts.get(i).name();
            LockLostException stale = fences.check(connection, name, serverNames.apply(name), tokens[i]);
            if (stale != null) {
                throw stale;
            }
        }
    }

    /**
     * A hold acquired on a worker thread for a caller elsewhere (a primitive's asynchronous acquisition) is not the
     * worker's own: a transaction the worker runs later is not fenced with it.
     */
    public static LockHandle disowned(LockHandle handle) {
        for (LockHandle part : handle.parts()) {
            if (part instanceof TransactionBoundHandle bound) {
                bound.disown();
            }
        }
        if (handle instanceof TransactionBoundHandle bound) {
            bound.disown();
        }
        return handle;
    }

    /** Releases a hold of this engine at once, whatever transaction is open; any other handle as it releases. */
    public static void releaseAtOnce(LockHandle handle) {
        if (handle instanceof TransactionBoundHandle bound) {
            bound.releaseAtOnce();
        } else {
            handle.release();
        }
    }
}
