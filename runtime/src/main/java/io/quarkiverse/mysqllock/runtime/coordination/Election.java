package io.quarkiverse.mysqllock.runtime.coordination;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LeaderElection;
import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.LeadershipRevoked;
import io.quarkiverse.mysqllock.LeadershipRevoked.Reason;
import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockInfo;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.LockOptions;

/**
 * One role's election for this instance: a campaign thread that waits for the role's lock in slices (the engine's
 * wait: server-side on NAMED), holds it for a term, and waits until the term ends (its loss, a step-down or leaving),
 * then campaigns again. Every change of the current term happens under this object's monitor; each term ends once.
 * Both events of a term are fired by the campaign thread, so its {@link LeadershipRevoked} always follows its
 * {@link LeadershipGranted}, whichever thread ended it.
 */
public final class Election implements LeaderElection {

    /** One slice of the campaign's wait: how soon a campaign notices that it was left. */
    static final Duration CAMPAIGN_SLICE = Duration.ofSeconds(2);
    /** The pause after an acquisition failed for another reason than a busy lock (database down, pool exhausted). */
    static final long FAILURE_PAUSE_MILLIS = 1000;

    private static final Logger LOG = Logger.getLogger(Election.class);
    private static final LockOptions CAMPAIGN = LockOptions.waitingUpTo(CAMPAIGN_SLICE).withoutNesting();

    private final LockManager locks;
    private final String role;
    private final String lockName;
    private final Consumer<Object> events;
    /** Releases a hold, answering the loss found before or by the release, if any. */
    private final Function<LockHandle, LockLostException> release;
    /** Whether the manager is closed: then the election campaigns no more, and cannot be joined again. */
    private final BooleanSupplier managerClosed;
    private final TermConfirmation confirmation;
    private final TermWorks work;

    // Guarded by this.
    private boolean joined;
    private Term current;
    private long holdOffUntil;
    private Thread campaign;

    /**
     * The role must have been checked by the caller as a lock name. {@code release} releases a hold and answers its
     * loss, if it was lost before or by the release: the reason of a term that ends.
     */
    public Election(LockManager locks, String role, Consumer<Object> events,
            Function<LockHandle, LockLostException> release, BooleanSupplier managerClosed, TermConfirmation confirmation) {
        this.locks = locks;
        this.work = new TermWorks(role);
        this.confirmation = confirmation;
        this.release = release;
        this.managerClosed = managerClosed;
        this.role = role;
        this.lockName = role + "#leader";
        this.events = events;
    }

    private static final class Term {
        final LockHandle handle;
        final long number;
        /** The confirmation window of this term; 0 for none. */
        final long window;
        final AtomicBoolean ended = new AtomicBoolean();
        /** Counted down once the term has ended: reason and loss set, no longer current. */
        final CountDownLatch done = new CountDownLatch(1);
        volatile Reason reason;
        volatile LockLostException loss;

        Term(LockHandle handle, long number, long window) {
            this.handle = handle;
            this.number = number;
            this.window = window;
        }
    }

    /** Adds work to run for each term from now on (before {@link #join()}, so that it sees the first). */
    public void addTermWork(TermWork termWork) {
        work.add(termWork);
    }

    @Override
    public String role() {
        return role;
    }

    @Override
    public synchronized LeaderElection join() {
        if (managerClosed.getAsBoolean()) {
            throw new IllegalStateException("The lock manager is closed: the election of '" + role
                    + "' cannot be joined");
        }
        if (!joined) {
            joined = true;
            campaign = new Thread(this::campaign, "mysql-lock-election-" + role);
            campaign.setDaemon(true);
            campaign.start();
        }
        return this;
    }

    @Override
    public boolean isLeader() {
        return leads(currentTerm());
    }

    @Override
    public Optional<LockInfo> leader() {
        return locks.inspect(lockName)
                .map(holder -> new LockInfo(role, holder.holder(), holder.since(), holder.fencingToken(), holder.mode()));
    }

    @Override
    public OptionalLong term() {
        Term term = currentTerm();
        return leads(term) ? OptionalLong.of(term.number) : OptionalLong.empty();
    }

    /** Whether this instance leads in that term: its lock valid, and confirmed within the term's window if it has one. */
    private boolean leads(Term term) {
        return term != null && (term.window == 0 ? term.handle.isValid()
                : confirmation.check().test(term.handle, term.window));
    }

    private synchronized Term currentTerm() {
        return current;
    }

    @Override
    public void stepDown() {
        stepDown(DEFAULT_HAND_OVER);
    }

    @Override
    public void stepDown(Duration handOver) {
        if (handOver == null || handOver.isNegative()) {
            throw new IllegalArgumentException("The hand-over of a step-down must be zero or positive, not " + handOver);
        }
        Term term;
        synchronized (this) {
            term = current;
            if (term == null) {
                return;
            }
            holdOffUntil = System.nanoTime() + Math.min(handOver.toNanos(), TimeUnit.DAYS.toNanos(365));
        }
        end(term, Reason.STEPPED_DOWN, null);
    }

    @Override
    public void close() {
        Term term;
        Thread running;
        synchronized (this) {
            if (!joined) {
                return;
            }
            joined = false;
            term = current;
            running = campaign;
            campaign = null;
            notifyAll();
        }
        if (term != null) {
            end(term, Reason.LEFT, null);
        }
        if (running != Thread.currentThread()) {
            try {
                // A slice of the campaign may still be waiting for the lock: once it ends, nothing is held.
                running.join(CAMPAIGN_SLICE.toMillis() + FAILURE_PAUSE_MILLIS + 1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void campaign() {
        try {
            while (holdOffOver()) {
                try {
                    locks.tryAcquire(lockName, CAMPAIGN).ifPresent(this::lead);
                } catch (RuntimeException e) {
                    // A failure of this attempt (database down, pool exhausted, a term whose number could not be
                    // read) costs this attempt only; a closed manager ends the campaign.
                    if (managerClosed.getAsBoolean()) {
                        LOG.debugf("Election of '%s' ends: the lock manager is closed", role);
                        stopCampaign();
                        break;
                    }
                    LOG.warnf("Election of '%s': could not campaign (%s); trying again in %d ms", role, e.getMessage(),
                            FAILURE_PAUSE_MILLIS);
                    pause(FAILURE_PAUSE_MILLIS);
                }
            }
        } finally {
            Term term = stopCampaign();
            if (term != null) { // only if this thread ended abnormally: a term is never left behind
                end(term, Reason.LEFT, null);
            }
        }
    }

    /**
     * This thread campaigns no more (an interrupt, a closed manager, its end): if it is still the campaign, the
     * election is left, and the current term, if any, returned for ending.
     */
    private synchronized Term stopCampaign() {
        if (campaign != Thread.currentThread()) {
            return null;
        }
        joined = false;
        campaign = null;
        notifyAll();
        return current;
    }

    /** Whether this thread is the campaign of a joined election (a left election's thread is not, once rejoined). */
    private boolean campaigning() {
        return joined && campaign == Thread.currentThread();
    }

    /** Waits out a step-down's hand-over; whether the campaign goes on (false once left). */
    private synchronized boolean holdOffOver() {
        try {
            long left;
            while (campaigning() && (left = holdOffUntil - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        return campaigning() && !Thread.currentThread().isInterrupted();
    }

    private synchronized void pause(long millis) {
        try {
            if (campaigning()) {
                wait(millis);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One term: from the grant until it ends. */
    private void lead(LockHandle handle) {
        long number;
        try {
            number = handle.fencingToken();
        } catch (RuntimeException e) {
            handle.release();
            throw e;
        }
        TermConfirmation.Window windows;
        try {
            windows = confirmation.window().get();
        } catch (RuntimeException e) {
            handle.release(); // no term on a guess of the fleet's windows: the campaign tries again
            throw e;
        }
        long window = windows.confirmNanos();
        if (window > 0 && !graceOver(handle, window, Math.max(window, windows.graceNanos()))) {
            handle.release(); // lost or left during the grace: no term
            return;
        }
        Term term = new Term(handle, number, window);
        synchronized (this) {
            if (!campaigning()) {
                handle.release();
                return;
            }
            current = term;
        }
        // before the grant is announced: a loss while observers run ends the term at once
        handle.onLost(loss -> end(term, Reason.LOST, loss));
        LeadershipGranted granted = new LeadershipGranted(role, number);
        startWork(term, granted);
        fire(granted);
        if (!awaitEnd(term)) {
            stopCampaign(); // interrupted: this thread campaigns no more
            end(term, Reason.LEFT, null);
        }
        awaitUninterruptibly(term.done); // another thread may still be ending it
        // the term's work stops before this instance campaigns again: it never runs twice at once
        work.awaitStopped(number);
        fire(new LeadershipRevoked(role, number, term.reason, term.loss));
    }

    /**
     * Starts the term's work, unless the term ended already (a step-down, a close or a loss since it became current):
     * work started after its term's stop would run beside the next leader, and the campaign would wait for it for ever.
     * Under this object's monitor, under which {@link #end} stops the work once it marked the term ended.
     */
    private synchronized void startWork(Term term, LeadershipGranted granted) {
        if (!term.ended.get()) {
            work.start(granted);
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Holds a new term's lock for the fleet's largest confirmation window (+ a margin) before the term begins: a former
     * leader whose session the server ended stops saying it leads meanwhile, whatever keepalive interval it runs with.
     * Then the lock must be confirmed within this instance's window (a keepalive check ran meanwhile), waiting up to
     * another window for it. False if the lock was lost, the election left, or no confirmation came.
     */
    private synchronized boolean graceOver(LockHandle handle, long window, long grace) {
        long begins = System.nanoTime() + grace + TermConfirmation.GRACE_MARGIN_NANOS;
        long givesUp = begins + window;
        try {
            long now;
            while (campaigning() && handle.isValid() && ((now = System.nanoTime()) - begins < 0
                    || (!confirmation.check().test(handle, window) && now - givesUp < 0))) {
                TimeUnit.NANOSECONDS.timedWait(this, TermConfirmation.pollNanos(window));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        return campaigning() && confirmation.check().test(handle, window);
    }

    /**
     * Whether the term ended; false if this thread was interrupted first. A strict term whose lock is no longer
     * confirmed within its window ends here, as lost.
     */
    private boolean awaitEnd(Term term) {
        while (true) {
            synchronized (this) {
                try {
                    if (current != term) {
                        return true;
                    }
                    if (term.window == 0) {
                        wait();
                    } else {
                        TimeUnit.NANOSECONDS.timedWait(this, TermConfirmation.pollNanos(term.window));
                    }
                    if (current != term) {
                        return true;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            if (term.window > 0 && !confirmation.check().test(term.handle, term.window)) {
                end(term, Reason.LOST, TermConfirmation.unconfirmed(lockName, term.window));
            }
        }
    }

    /**
     * Ends a term once: its lock given back, then no longer current; the campaign thread then announces it. A term whose
     * lock was lost, found before or by this release, ended by its loss whatever ended it here.
     */
    private void end(Term term, Reason reason, LockLostException loss) {
        if (!term.ended.compareAndSet(false, true)) {
            return;
        }
        synchronized (this) {
            // after a start of the term's work under way, if any: it is stopped here, or it sees the term ended
            work.stop(term.number);
        }
        if (reason != Reason.LOST) {
            // a graceful end gives the lock back once the term's work stopped, so that the next leader's never overlaps it
            work.awaitStoppedBriefly(term.number, reason == Reason.LEFT ? "leaving" : "step-down");
        }
        LockLostException found = null;
        try {
            found = release.apply(term.handle);
        } catch (RuntimeException e) {
            LOG.warnf(e, "Election of '%s': the lock of term %d could not be given back", role, term.number);
        }
        term.loss = loss != null ? loss : found;
        term.reason = term.loss != null ? Reason.LOST : reason;
        synchronized (this) {
            if (current == term) {
                current = null;
            }
            notifyAll();
        }
        term.done.countDown();
        if (term.reason == Reason.LOST) {
            LOG.warnf("This instance no longer leads '%s' (term %d): %s", role, term.number, term.loss.getMessage());
        }
    }

    private void fire(Object event) {
        try {
            events.accept(event);
        } catch (RuntimeException | Error e) {
            LOG.warnf(e, "An observer of %s failed; the election is not affected", event);
        }
    }

    @Override
    public String toString() {
        return "LeaderElection[" + role + "]";
    }
}
