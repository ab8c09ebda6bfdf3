package io.quarkiverse.mysqllock.it;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.RollbackException;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkus.narayana.jta.QuarkusTransaction;

/**
 * The fault suite's transaction workload ({@code fault-worker.workload=transactions}): each critical section is a JTA
 * transaction that, under a hot name's lock, reads the name's counter row as an application reads its data (a plain,
 * non-locking read), writes it back incremented, records the commit in {@code tx_commit} (the name, the holder's fencing
 * token, the counter's sequence number it read and the one it wrote), then works on for up to {@code max-tail} before
 * it commits. Three routes: a {@code @Transactional} method calling a {@code @Locked} one (the tail after the lock's
 * release), both annotations on one method (the tail inside it), and {@code withLock} in a transaction begun by hand.
 * <p>
 * The checker ({@code TransactionChecker} in the tests) reads the commits: a commit a later holder did not see when it
 * read (it landed after that holder was granted the lock) is a stale commit, and a commit that did not read the one
 * before it lost an update. With {@code quarkus.mysql-lock.fenced-commit=true} there must be none; without, a holder
 * paused, or whose NAMED session is killed, after its release and before its commit commits stale.
 * <p>
 * Journaled as the other workloads' sections are ({@link FaultJournal}): {@code S} once granted (with the token),
 * {@code L} when the transaction rolled back for a lost lock, {@code E} with the outcome once it ended, {@code R}.
 */
@Singleton
public class TransactionWorker {

    private static final Logger LOG = Logger.getLogger(TransactionWorker.class);
    private static final Duration MAX_TAIL = Duration.ofMillis(60);

    enum Route {
        LOCKED_IN_TRANSACTION,
        TRANSACTIONAL_LOCKED,
        WITH_LOCK_IN_TRANSACTION
    }

    @Inject
    LockManager locks;
    @Inject
    TransactionSections sections;
    @Inject
    AgroalDataSource dataSource;
    @Inject
    FaultJournal journal;

    /** One critical section on {@code name}, journaled under {@code section}. */
    void run(String section, String name, Duration wait) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        Route route = Route.values()[random.nextInt(Route.values().length)];
        long tail = random.nextLong(MAX_TAIL.toMillis() + 1);
        long requestedAt = FaultJournal.now();
        boolean[] granted = new boolean[1];
        TransactionSections.Write write = () -> {
            granted[0] = true;
            write(section, name, requestedAt);
        };
        String outcome;
        try {
            switch (route) {
                case LOCKED_IN_TRANSACTION -> sections.lockedThenTail(name, write, tail);
                case TRANSACTIONAL_LOCKED -> sections.transactionalLocked(name, write, tail);
                case WITH_LOCK_IN_TRANSACTION -> QuarkusTransaction.requiringNew().run(() -> {
                    locks.withLock(name, wait, write::run);
                    tail(tail);
                });
            }
            outcome = "committed";
        } catch (RuntimeException e) {
            if (!granted[0]) {
                throw e; // never granted: no section (the loop's handler pauses after an error)
            }
            LockLostException lost = cause(e, LockLostException.class);
            if (lost != null) {
                journal.write("L", section, FaultJournal.now(), lost.reason());
                outcome = "rolled-back-lost";
            } else if (cause(e, RollbackException.class) != null) {
                outcome = "rolled-back";
            } else {
                LOG.debugf("%s: %s", section, e);
                outcome = "failed";
            }
        }
        long ended = FaultJournal.now();
        journal.write("E", section, outcome, ended, ended);
        journal.write("R", section, ended);
    }

    /** Under the lock: the section begins, the counter is read, written and the commit recorded. */
    private void write(String section, String name, long requestedAt) {
        long acquiredAt = FaultJournal.now();
        LockHandle held = locks.currentLock().orElseThrow(() -> new IllegalStateException("no lock held"));
        long token;
        try {
            token = held.fencingToken();
        } catch (RuntimeException e) {
            journal.write("S", section, name, 0, acquiredAt, requestedAt);
            throw e;
        }
        journal.write("S", section, name, token, acquiredAt, requestedAt);
        try (Connection connection = dataSource.getConnection()) {
            long seenSeq;
            long seenValue;
            try (PreparedStatement read = connection.prepareStatement("SELECT seq, value FROM tx_counter WHERE name = ?")) {
                read.setString(1, name);
                try (ResultSet rs = read.executeQuery()) {
                    rs.next();
                    seenSeq = rs.getLong(1);
                    seenValue = rs.getLong(2);
                }
            }
            try (PreparedStatement update = connection
                    .prepareStatement("UPDATE tx_counter SET seq = seq + 1, value = ? WHERE name = ?")) {
                update.setLong(1, seenValue + 1);
                update.setString(2, name);
                update.executeUpdate();
            }
            // the transaction sees its own update: the sequence number this commit takes
            try (PreparedStatement record = connection.prepareStatement("INSERT INTO tx_commit (name, section, token,"
                    + " seen_seq, seq) SELECT name, ?, ?, ?, seq FROM tx_counter WHERE name = ?")) {
                record.setString(1, section);
                record.setLong(2, token);
                record.setLong(3, seenSeq);
                record.setString(4, name);
                record.executeUpdate();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(section + ": the write failed: " + e.getMessage(), e);
        }
    }

    /** The work a transaction does after its write, before it commits. */
    static void tail(long millis) {
        if (millis > 0) {
            try {
                TimeUnit.MILLISECONDS.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static <T extends Throwable> T cause(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
            for (Throwable suppressed : t.getSuppressed()) {
                if (type.isInstance(suppressed)) {
                    return type.cast(suppressed);
                }
            }
        }
        return null;
    }
}
