package io.quarkiverse.mysqllock.runtime.lease;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.runtime.jdbc.ConnectionSource;
import io.quarkiverse.mysqllock.runtime.jdbc.KeptConnection;
import io.quarkiverse.mysqllock.runtime.jdbc.ServerVersion;
import io.quarkiverse.mysqllock.runtime.jdbc.SqlErrors;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements.RowState;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements.TakeRequest;

/**
 * Group commit: the takes and give-ups that threads of this instance ask for at the same moment go to the server as one
 * transaction (the give-ups in one statement, the takes in one more and their rows read back in a third), committed
 * once: on a server that flushes its log at every commit, the flush, not the statement, is what a lease costs, and 16
 * threads then share a few flushes instead of making 32. A thread alone runs its own statement at once, the one it would
 * run without batching ({@link Combiner}: no thread waits for a batch to fill), and the threads that come meanwhile
 * queue for the next batch. Batches run on a connection kept for them ({@link KeptConnection}), and none of their
 * statements waits for a row lock: a row a transaction holds delays no other thread's lease, and each answers within
 * statement-timeout. A request no batch took by its caller's deadline (a batch stalled on the connection) goes alone.
 * <p>
 * A batch answers only what it knows exactly, and every other request {@code ALONE}, which the thread then runs as its
 * own statement on a connection of its own, with the single statement's handling of errors and waits: a take is granted
 * where its row names its owner token once the transaction committed, with the row's fence; a give-up is answered 1 when
 * the batch gave up every lease it carried (owner tokens are unique per acquisition, so each matched its own row); a
 * batch whose give-ups did not all match, or that met a row lock, is rolled back whole and answers {@code ALONE}. Takes
 * of a batch that failed once its statements may have reached the server are given up before anyone is answered.
 */
final class LeaseBatches {

    private static final Logger LOG = Logger.getLogger(LeaseEngine.class);
    /** The most requests one batch carries. */
    static final int MAX_BATCH = 32;
    /** How long the connection kept for batches stays out of the pool with no batch. */
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * How long a request waits for a batch beyond its caller's deadline before it goes alone: batches take milliseconds,
     * so only a batch stalled on its connection keeps one waiting that long.
     */
    static final long PATIENCE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** How often a batch rolled back by a deadlock (or a Galera certification conflict) is run again. */
    private static final int DEADLOCK_RETRIES = 10;

    /** A take or a give-up. */
    record Op(TakeRequest take, Lease giveUp) {
    }

    /** What a batch answered a take. */
    record TakeAnswer(Kind kind, long fence, long sentAtNanos, String holder, long expiresMicros,
            long answeredAtNanos) {
        enum Kind {
            /** Taken, with this fence, by a statement sent at {@code sentAtNanos}. */
            TAKEN,
            /**
             * Held by another owner now: its row exists, with this version ({@code holder}, {@code expiresMicros}), read
             * back at {@code answeredAtNanos}.
             */
            BUSY,
            /** Not free, by a take statement of its own: the row may be missing (the take loop seeds it). */
            NOT_FREE,
            /** Not answered (no row yet, a row locked, or the batch failed): the take loop takes it on its own. */
            ALONE
        }

        static final TakeAnswer ALONE_ANSWER = new TakeAnswer(Kind.ALONE, 0, 0, null, 0, 0);
        static final TakeAnswer NOT_FREE_ANSWER = new TakeAnswer(Kind.NOT_FREE, 0, 0, null, 0, 0);

        static TakeAnswer taken(long fence, long sentAtNanos) {
            return new TakeAnswer(Kind.TAKEN, fence, sentAtNanos, null, 0, 0);
        }
    }

    /** What a batch answered: a take's answer, or a give-up's (1 still ours, 0 not, {@link #ALONE} unanswered). */
    record Answer(TakeAnswer take, int released) {
        static final int ALONE = Integer.MIN_VALUE;
        static final Answer UNANSWERED = new Answer(TakeAnswer.ALONE_ANSWER, ALONE);
    }

    /** The batch cannot answer exactly (a row lock, a give-up that did not match): rolled back, every request alone. */
    private static final class AllAlone extends Exception {
        AllAlone() {
            super(null, null, false, false);
        }
    }

    private final ConnectionSource connections;
    private final Observations observations;
    private final LeaseStatements statements;
    private final Combiner<Op, Answer> combiner;
    private final KeptConnection connection;

    LeaseBatches(ConnectionSource connections, LeaseStatements statements, Observations observations) {
        this.connections = connections;
        this.statements = statements;
        this.observations = observations;
        this.combiner = new Combiner<>(MAX_BATCH, this::runBatch, op -> Answer.UNANSWERED);
        this.connection = new KeptConnection(connections, "(lease takes and releases)");
    }

    /**
     * A take, together with what other threads ask for now; unanswered ({@code ALONE}) if no batch took it by the
     * caller's deadline, or a moment after it ({@link #PATIENCE_NANOS}): the caller then takes alone.
     */
    TakeAnswer take(TakeRequest take, long deadline) {
        return combiner.submit(new Op(take, null), Math.max(deadline, System.nanoTime() + PATIENCE_NANOS)).take();
    }

    /**
     * Gives the lease up, together with what other threads ask for now (on its own statement if no batch took it within
     * a moment): 1 if it was still ours, 0 if not, -1 if unknown.
     */
    int giveUp(Lease lease) {
        int released = combiner.submit(new Op(null, lease), System.nanoTime() + PATIENCE_NANOS).released();
        return released == Answer.ALONE ? statements.giveUp(lease) : released;
    }

    /** Gives back the connection kept for batches if no batch used it for a moment. */
    void giveBackIdleConnection() {
        connection.giveBackIfIdle(IDLE_NANOS);
    }

    void close() {
        connection.close();
    }

    /**
     * Runs on the connection kept for batches, one batch at a time (never waiting for it: the combiner's leader alone
     * uses it), each statement answering within statement-timeout: none of them waits for a row lock.
     */
    private <T> T runKept(ConnectionSource.Work<T> work) throws SQLException {
        return connection.run(Long.MAX_VALUE, boundMillis(), work);
    }

    private long boundMillis() {
        return connections.knownServer().map(connections::noRowWaitStatementMillis)
                .orElse(connections.statementTimeoutMillis() + 1000);
    }

    /**
     * One batch at a time: several at once, each on a connection of its own, measured slower (16 threads on 2 cores:
     * 1,369-1,465 acquisitions a second with four, 2,276-2,715 with one), smaller batches costing more commits.
     */
    private void runBatch(List<Combiner.Request<Op, Answer>> batch) {
        if (batch.size() == 1) {
            runAlone(batch.get(0));
            return;
        }
        Together together = new Together(batch);
        try {
            for (int attempt = 1;; attempt++) {
                try {
                    runKept(together::run);
                    together.answer();
                    return;
                } catch (SQLException e) {
                    if (!SqlErrors.isDeadlock(e) || attempt >= DEADLOCK_RETRIES) {
                        throw e;
                    }
                    // the whole transaction was rolled back: run it again
                }
            }
        } catch (SQLException | RuntimeException | Error e) {
            if (e instanceof SQLException sql && SqlErrors.isReadOnly(sql)) {
                connections.readOnlyFound("batch of " + batch.size() + " lease takes and releases");
            }
            LOG.debugf("A batch of %d lease takes and releases failed, each is run alone: %s", batch.size(),
                    e.getMessage());
            if (together.sent) {
                // The transaction may have committed before the failure was seen: no take may stay taken unknown (an
                // Error may also come once some were answered: those are held, and kept).
                List<TakeRequest> unanswered = together.takeRequests.stream().filter(request -> !request.done())
                        .map(request -> request.value.take()).toList();
                if (!unanswered.isEmpty()) {
                    abandon(unanswered);
                }
            }
            if (e instanceof Error error) {
                throw error;
            }
        }
    }

    /** A batch of several requests, as one transaction. */
    private final class Together {
        final List<Combiner.Request<Op, Answer>> takeRequests = new ArrayList<>();
        final List<TakeRequest> takes = new ArrayList<>();
        final List<Combiner.Request<Op, Answer>> giveUpRequests = new ArrayList<>();
        final List<Lease> giveUps = new ArrayList<>();
        /** Whether a statement may have reached the server (then a failure leaves the takes in doubt). */
        boolean sent;
        long sentAt;
        Map<String, RowState> rows;
        /** When the rows read back came back: their versions were written before. */
        long readAt;
        boolean alone;

        Together(List<Combiner.Request<Op, Answer>> batch) {
            for (Combiner.Request<Op, Answer> request : batch) {
                if (request.value.take() != null) {
                    takeRequests.add(request);
                    takes.add(request.value.take());
                } else {
                    giveUpRequests.add(request);
                    giveUps.add(request.value.giveUp());
                }
            }
        }

        /** The statements, in one transaction; committed only if every answer is exact. */
        Void run(Connection raw) throws SQLException {
            ServerVersion server = connections.server(raw);
            sent = true;
            sentAt = System.nanoTime();
            rows = null;
            alone = false;
            try (Statement statement = raw.createStatement()) {
                statement.execute("START TRANSACTION");
                boolean committed = false;
                try {
                    if (!giveUps.isEmpty() && statements.giveUpMany(raw, server, giveUps) != giveUps.size()) {
                        throw new AllAlone(); // which ones were not ours, only their own statements can tell
                    }
                    if (!takes.isEmpty()) {
                        rows = statements.takeMany(raw, server, takes);
                        readAt = System.nanoTime();
                    }
                    statement.execute("COMMIT");
                    committed = true;
                } catch (AllAlone e) {
                    alone = true;
                } catch (SQLException e) {
                    if (!SqlErrors.isLockWaitTimeout(e)) {
                        throw e;
                    }
                    // A row held by a transaction; the server may have undone only that statement, or everything
                    // (innodb_rollback_on_timeout): rolled back whole, and every request goes alone.
                    alone = true;
                } finally {
                    if (!committed) {
                        statement.execute("ROLLBACK");
                    }
                }
            }
            return null;
        }

        /** Answers every request the committed transaction answered; the others are left to go alone. */
        void answer() {
            if (alone) {
                return;
            }
            for (Combiner.Request<Op, Answer> request : giveUpRequests) {
                request.answer(new Answer(null, 1));
            }
            for (Combiner.Request<Op, Answer> request : takeRequests) {
                TakeRequest take = request.value.take();
                RowState row = rows.get(take.serverName());
                if (row != null) { // else no row yet: the take loop seeds it
                    request.answer(new Answer(take.ownerToken().equals(row.owner())
                            ? TakeAnswer.taken(row.fence(), sentAt)
                            : new TakeAnswer(TakeAnswer.Kind.BUSY, 0, 0, row.owner(), row.expiresMicros(), readAt), 0));
                }
            }
        }
    }

    /** A request alone: the single statement, as without batching, on the connection kept for batches. */
    private void runAlone(Combiner.Request<Op, Answer> request) {
        Op op = request.value;
        boolean[] sent = { false };
        try {
            if (op.take() == null) {
                request.answer(new Answer(null, runKept(raw -> statements.giveUpWithoutRowWaits(raw,
                        connections.server(raw), op.giveUp()))));
                return;
            }
            TakeRequest take = op.take();
            long sentAt = System.nanoTime();
            long fence = runKept(raw -> {
                ServerVersion server = connections.server(raw);
                sent[0] = true;
                return statements.takeWithoutRowWaits(raw, server, take.serverName(), take.ownerToken(),
                        TimeUnit.MICROSECONDS.toNanos(take.leaseMicros()), null);
            });
            request.answer(new Answer(fence > 0 ? TakeAnswer.taken(fence, sentAt) : TakeAnswer.NOT_FREE_ANSWER, 0));
        } catch (SQLException | RuntimeException | Error e) {
            // a row lock, a dead connection, a read-only server: the take loop and the single give-up handle these
            LOG.debugf("A lease %s failed on the connection kept for batches, it is run alone: %s",
                    op.take() == null ? "release" : "take", e.getMessage());
            if (op.take() != null && sent[0] && !request.done() && !(e instanceof SQLException sql && refused(sql))) {
                // the take may have committed before its answer was lost: it must not stay taken by nobody (the take
                // loop goes on with a new owner token)
                abandon(List.of(op.take()));
            }
            if (e instanceof Error error) {
                throw error;
            }
        }
    }

    /** The server refused the statement, which so changed nothing: a row lock, a deadlock, a read-only server. */
    private static boolean refused(SQLException e) {
        return SqlErrors.isLockWaitTimeout(e) || SqlErrors.isDeadlock(e) || SqlErrors.isReadOnly(e);
    }

    /**
     * Gives up whatever a failed statement may have taken, before anyone is answered, without waiting for a row lock (a
     * row locked here delays no other lease of the instance). Where a row is locked (a late commit of the failed
     * statement still holds it, a transaction), it is given up off this thread, once the row is free; if that fails
     * too, the leases end with their ttl.
     */
    private void abandon(List<TakeRequest> takes) {
        try {
            runKept(raw -> statements.giveUpTakesWithoutRowWaits(raw, connections.server(raw), takes));
        } catch (SQLException | RuntimeException e) {
            LOG.debugf("Giving up %d lease take(s) in doubt at once failed, it is done in the background: %s",
                    takes.size(), e.getMessage());
            // nobody holds them: until they are given up, this instance's next take of each name takes its row over
            takes.forEach(take -> observations.ended(take.serverName(), List.of(take.ownerToken())));
            try {
                connections.executor().execute(() -> abandonWaiting(takes));
            } catch (RejectedExecutionException shutDown) {
                LOG.debugf("Shut down: the lease take(s) in doubt end with their ttl");
            }
        }
    }

    /** Gives up takes in doubt on a connection of their own, waiting for their rows; else they end with their ttl. */
    private void abandonWaiting(List<TakeRequest> takes) {
        try {
            connections.withStatements("(lease takes in doubt)", raw -> statements.giveUpTakes(raw, takes));
        } catch (SQLException | RuntimeException e) {
            LOG.debugf("Giving up %d lease take(s) in doubt failed (they end with their ttl): %s", takes.size(),
                    e.getMessage());
        }
    }
}
