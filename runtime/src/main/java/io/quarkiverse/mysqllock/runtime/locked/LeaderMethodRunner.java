package io.quarkiverse.mysqllock.runtime.locked;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkiverse.mysqllock.runtime.coordination.Election;
import io.quarkiverse.mysqllock.runtime.coordination.TermWork;
import io.quarkus.arc.Arc;
import io.quarkus.arc.InstanceHandle;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * Runs the {@code @WhileLeader} methods: at start-up, joins their roles' elections with the work of each term, which
 * the election tells directly (not through CDI observers, which an application's failing observer could keep from being
 * told): a thread per method from the grant; at the end of the term an interrupt, and the lock given back (graceful
 * end) or the next campaign (loss) only once the methods stopped. At shutdown the elections are left first, while the
 * beans the methods run on still live. Registered only when the application has such methods.
 */
@Singleton
public class LeaderMethodRunner {

    private static final Logger LOG = Logger.getLogger(LeaderMethodRunner.class);

    @Inject
    LeaderMethods methods;
    @Inject
    LockManager locks;

    void start(@Observes StartupEvent event) {
        for (String role : methods.roles()) {
            List<LeaderMethod> ofRole = methods.of(role);
            for (LeaderMethod method : ofRole) {
                try (InstanceHandle<?> bean = Arc.container().instance(method.beanClass)) {
                    if (!bean.isAvailable()) {
                        throw new IllegalStateException(method.description + " is declared on " + method.beanClass.getName()
                                + ", which is not a bean: give the class a bean scope (@ApplicationScoped, @Singleton)");
                    }
                }
            }
            Election election = (Election) locks.election(role);
            election.addTermWork(new Work(ofRole));
            election.join();
        }
    }

    void stop(@Observes ShutdownEvent event) {
        for (String role : methods.roles()) {
            try {
                locks.election(role).close();
            } catch (IllegalStateException closedAlready) {
                // the manager was closed first: its elections were left then
            }
        }
    }

    /** The work of one role's terms: a thread per method. */
    private final class Work implements TermWork {

        private final List<LeaderMethod> ofRole;
        /** The current term's threads, and its number; guarded by this. */
        private List<Thread> threads = List.of();
        private long term;

        Work(List<LeaderMethod> ofRole) {
            this.ofRole = ofRole;
        }

        @Override
        public synchronized void start(LeadershipGranted granted) {
            List<Thread> started = new ArrayList<>();
            for (LeaderMethod method : ofRole) {
                Thread thread = new Thread(() -> run(method, granted),
                        "mysql-lock-leader-" + granted.role() + "-" + method.method.getName());
                thread.setDaemon(true);
                started.add(thread);
            }
            term = granted.term();
            threads = started;
            started.forEach(Thread::start);
        }

        @Override
        public synchronized void stop(long ended) {
            if (term == ended) {
                threads.forEach(Thread::interrupt);
            }
        }

        @Override
        public boolean awaitStopped(long ended, long nanos) {
            List<Thread> running;
            synchronized (this) {
                if (term != ended) {
                    return true;
                }
                running = threads;
            }
            long deadline = System.nanoTime() + nanos;
            for (Thread thread : running) {
                if (thread == Thread.currentThread()) {
                    continue; // the method itself stepped down
                }
                try {
                    thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
                if (thread.isAlive()) {
                    return false;
                }
            }
            return true;
        }
    }

    private void run(LeaderMethod method, LeadershipGranted granted) {
        try (InstanceHandle<?> bean = Arc.container().instance(method.beanClass)) {
            method.invoke(bean.get(), granted);
            LOG.debugf("%s returned in term %d", method.description, granted.term());
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof InterruptedException || Thread.currentThread().isInterrupted()) {
                LOG.debugf("%s stopped: term %d ended", method.description, granted.term());
                return;
            }
            LOG.errorf(cause, "%s failed in term %d; this instance steps down so that another takes over",
                    method.description, granted.term());
            stepDown(method);
        } catch (IllegalAccessException | RuntimeException e) {
            LOG.errorf(e, "%s could not be called; this instance steps down", method.description);
            stepDown(method);
        }
    }

    private void stepDown(LeaderMethod method) {
        try {
            locks.election(method.role).stepDown();
        } catch (IllegalStateException closed) {
            // the manager is closed: nothing left to hand over
        }
    }
}
