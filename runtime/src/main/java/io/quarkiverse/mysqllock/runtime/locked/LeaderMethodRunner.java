package io.quarkiverse.mysqllock.runtime.locked;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LeadershipGranted;
import io.quarkiverse.mysqllock.LeadershipRevoked;
import io.quarkiverse.mysqllock.LockManager;
import io.quarkus.arc.Arc;
import io.quarkus.runtime.StartupEvent;

/**
 * Runs the {@code @WhileLeader} methods: joins their roles' elections at start-up, starts each method of a role on a
 * thread of its own when this instance is granted the role, and when the term ends interrupts those threads and waits
 * for them, on the election's thread, so that the election campaigns again only once the term's work has stopped.
 * Registered only when the application has such methods.
 */
@Singleton
public class LeaderMethodRunner {

    private static final Logger LOG = Logger.getLogger(LeaderMethodRunner.class);

    @Inject
    LeaderMethods methods;
    @Inject
    LockManager locks;

    /** By role: the threads running the current term's methods. */
    private final Map<String, Term> running = new ConcurrentHashMap<>();

    private record Term(long number, List<Thread> threads) {
    }

    void start(@Observes StartupEvent event) {
        for (String role : methods.roles()) {
            locks.election(role).join();
        }
    }

    void granted(@Observes LeadershipGranted granted) {
        List<LeaderMethod> ofRole = methods.of(granted.role());
        if (ofRole.isEmpty()) {
            return;
        }
        List<Thread> threads = new ArrayList<>();
        for (LeaderMethod method : ofRole) {
            Thread thread = new Thread(() -> run(method, granted),
                    "mysql-lock-leader-" + granted.role() + "-" + method.method.getName());
            thread.setDaemon(true);
            threads.add(thread);
        }
        running.put(granted.role(), new Term(granted.term(), threads));
        threads.forEach(Thread::start);
    }

    void revoked(@Observes LeadershipRevoked revoked) {
        Term term = running.get(revoked.role());
        if (term == null || term.number() != revoked.term() || !running.remove(revoked.role(), term)) {
            return;
        }
        term.threads().forEach(Thread::interrupt);
        for (Thread thread : term.threads()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void run(LeaderMethod method, LeadershipGranted granted) {
        try {
            method.invoke(Arc.container().instance(method.beanClass).get(), granted);
            LOG.debugf("%s returned in term %d", method.description, granted.term());
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof InterruptedException || Thread.currentThread().isInterrupted()) {
                LOG.debugf("%s stopped: term %d ended", method.description, granted.term());
                return;
            }
            LOG.errorf(cause, "%s failed in term %d; this instance steps down so that another takes over",
                    method.description, granted.term());
            locks.election(method.role).stepDown();
        } catch (IllegalAccessException | RuntimeException e) {
            LOG.errorf(e, "%s could not be called; this instance steps down", method.description);
            locks.election(method.role).stepDown();
        }
    }
}
