package io.quarkiverse.mysqllock.runtime.metrics;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;

/**
 * Metrics whose failures are logged, never thrown: the engines report from the middle of a grant, a release, a loss
 * and a renewal, and a registry that refuses a meter (a Prometheus registry whose meter of the same name has other tag
 * keys, a registry closed early) must not leak a granted lock, silence a loss or stop the renewals.
 */
public final class GuardedMetrics implements LockMetrics {

    private static final Logger LOG = Logger.getLogger(GuardedMetrics.class);

    private final LockMetrics metrics;
    /** Set at the first failure: it is logged with its cause once, later ones at debug level. */
    private final AtomicBoolean failedOnce = new AtomicBoolean();

    private GuardedMetrics(LockMetrics metrics) {
        this.metrics = metrics;
    }

    /** The same metrics, whose failures are logged instead of thrown into the engines. */
    public static LockMetrics of(LockMetrics metrics) {
        return metrics == LockMetrics.NONE || metrics instanceof GuardedMetrics ? metrics : new GuardedMetrics(metrics);
    }

    @Override
    public void acquisition(LockMode engine, Outcome outcome, long waitNanos) {
        guard(() -> metrics.acquisition(engine, outcome, waitNanos));
    }

    @Override
    public void method(String method, MethodOutcome outcome, long nanos) {
        guard(() -> metrics.method(method, outcome, nanos));
    }

    @Override
    public void jobRun(String job, RunOutcome outcome, long nanos) {
        guard(() -> metrics.jobRun(job, outcome, nanos));
    }

    @Override
    public void jobSilence(String job, Supplier<Duration> since) {
        guard(() -> metrics.jobSilence(job, since));
    }

    @Override
    public void held(LockMode engine, long holdNanos) {
        guard(() -> metrics.held(engine, holdNanos));
    }

    @Override
    public void lost(LockMode engine, LockLostException.Reason cause) {
        guard(() -> metrics.lost(engine, cause));
    }

    @Override
    public void renewed(int leases) {
        guard(() -> metrics.renewed(leases));
    }

    @Override
    public void engineChosen(LockMode engine, IntSupplier locksHeld, IntSupplier pinnedConnections) {
        guard(() -> metrics.engineChosen(engine, locksHeld, pinnedConnections));
    }

    @Override
    public void close() {
        guard(() -> metrics.close());
    }

    private void guard(Runnable recording) {
        try {
            recording.run();
        } catch (RuntimeException | LinkageError e) {
            failed(e);
        }
    }

    private void failed(Throwable e) {
        if (failedOnce.compareAndSet(false, true)) {
            LOG.warn("Recording a lock metric failed; the locks are not affected, and further failures are logged at"
                    + " debug level (category " + GuardedMetrics.class.getName() + ")", e);
        } else {
            LOG.debug("Recording a lock metric failed", e);
        }
    }
}
