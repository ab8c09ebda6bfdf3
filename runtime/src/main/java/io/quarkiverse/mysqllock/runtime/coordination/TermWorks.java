package io.quarkiverse.mysqllock.runtime.coordination;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LeadershipGranted;

/** One election's {@link TermWork}s, started, stopped and waited for together; their failures logged. */
final class TermWorks {

    /** How long a graceful end (step-down, leaving) waits for the term's work to stop before giving the lock back. */
    static final long GRACEFUL_STOP_NANOS = TimeUnit.SECONDS.toNanos(10);

    private static final Logger LOG = Logger.getLogger(Election.class);

    private final String role;
    private final List<TermWork> works = new CopyOnWriteArrayList<>();

    TermWorks(String role) {
        this.role = role;
    }

    void add(TermWork work) {
        works.add(work);
    }

    void start(LeadershipGranted granted) {
        for (TermWork work : works) {
            try {
                work.start(granted);
            } catch (RuntimeException | Error e) {
                LOG.errorf(e, "Election of '%s': the work of term %d could not be started", role, granted.term());
            }
        }
    }

    void stop(long term) {
        for (TermWork work : works) {
            work.stop(term);
        }
    }

    /** Waits up to {@link #GRACEFUL_STOP_NANOS} for each, then logs that the lock is given back anyway. */
    void awaitStoppedBriefly(long term, String end) {
        for (TermWork work : works) {
            if (!work.awaitStopped(term, GRACEFUL_STOP_NANOS)) {
                LOG.warnf("Election of '%s': the work of term %d did not stop within %d s of its %s; the lock is given"
                        + " back anyway", role, term, TimeUnit.NANOSECONDS.toSeconds(GRACEFUL_STOP_NANOS), end);
            }
        }
    }

    /** Waits until each has stopped, saying so every {@link #GRACEFUL_STOP_NANOS} while one still runs. */
    void awaitStopped(long term) {
        for (TermWork work : works) {
            while (!work.awaitStopped(term, GRACEFUL_STOP_NANOS)) {
                LOG.warnf("Election of '%s': the work of term %d still runs %d s after the term ended; this instance"
                        + " campaigns again once it stops", role, term, TimeUnit.NANOSECONDS.toSeconds(GRACEFUL_STOP_NANOS));
            }
        }
    }
}
