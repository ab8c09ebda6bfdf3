package io.quarkiverse.mysqllock.runtime.locked;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkiverse.mysqllock.runtime.jobs.JobLauncher;
import io.quarkiverse.mysqllock.runtime.jobs.JobTick;
import io.quarkus.agroal.DataSource;
import io.quarkus.arc.Arc;
import io.quarkus.arc.InjectableContext;
import io.quarkus.arc.InjectableInstance;
import io.quarkus.arc.InstanceHandle;
import io.quarkus.arc.ManagedContext;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;

/**
 * Runs a scheduled job of this application outside its schedule: its {@code @Locked} method called through its bean
 * (so through the interceptor: its lock, its history), with a {@link JobExecution} that says why, on a worker thread,
 * with a request context as the scheduler gives one.
 */
@Singleton
public class JobLaunches implements JobLauncher {

    private static final Logger LOG = Logger.getLogger(JobLaunches.class);
    @Inject
    LockedMethods methods;

    /** The lock datasource's manager, looked up when a job is run now (not when the start checks the settings). */
    @Inject
    Instance<MySqlLockManager> locks;

    /** Every datasource's manager, for a job whose lock is on a named datasource. */
    @Inject
    @Any
    Instance<MySqlLockManager> managers;

    @Override
    public boolean has(String dataSource, String name) {
        return methods.all().stream().anyMatch(method -> name.equals(method.jobName())
                && dataSource.equals(dataSourceOf(method)));
    }

    private String dataSourceOf(LockedMethod method) {
        return method.dataSource == null ? locks.get().dataSourceName() : method.dataSource;
    }

    @Override
    public void check(String dataSource, String name) {
        job(dataSource, name);
    }

    /** The method of the job, or an error that says why it cannot be run so. */
    private LockedMethod job(String dataSource, String name) {
        List<LockedMethod> named = methods.all().stream().filter(method -> name.equals(method.jobName())).toList();
        if (named.isEmpty()) {
            throw new IllegalArgumentException("This application has no job '" + name + "' to run now: a job is a"
                    + " @Locked method with a ScheduledExecution parameter, and its lock's name written out. Its jobs: "
                    + methods.jobNames());
        }
        List<LockedMethod> ours = named.stream().filter(method -> dataSource.equals(dataSourceOf(method))).toList();
        if (ours.isEmpty()) {
            throw new IllegalArgumentException("Job '" + name + "' takes its lock on datasource "
                    + dataSourceOf(named.get(0)) + ", not " + dataSource + ": run it now from that datasource's"
                    + " LockManager");
        }
        if (ours.size() > 1) {
            throw new IllegalArgumentException("Job '" + name + "' is the lock of several methods ("
                    + ours.stream().map(method -> method.key).toList() + "): which one to run now is not clear");
        }
        LockedMethod job = ours.get(0);
        if (!launchable(job)) {
            throw new IllegalArgumentException(job.description + " cannot be run now: " + LAUNCHABLE);
        }
        return job;
    }

    /** Which job methods can run outside their schedule ({@link #launchable}). */
    static final String LAUNCHABLE = "only a method that takes its ScheduledExecution and nothing else, and is not a"
            + " Kotlin suspend function, can be";

    /** Whether a job's method can run outside its schedule: it takes its ScheduledExecution only, and is no suspend. */
    static boolean launchable(LockedMethod job) {
        return job.kind != ReturnKind.SUSPEND && job.kind != ReturnKind.SUSPEND_UNIT && method(job) != null;
    }

    /**
     * The job's method, if it takes its {@code ScheduledExecution} and nothing else; else null. Found once, with the
     * application's class loader as the start (or the first run-now) sees it, and kept: a queued run's watch asks from
     * a pool whose threads may not have that class loader.
     */
    private static Method method(LockedMethod job) {
        Method found = job.launchMethod;
        if (found != null) {
            return found;
        }
        try {
            Class<?> declaring = Class.forName(job.key.substring(0, job.key.indexOf('#')), false,
                    Thread.currentThread().getContextClassLoader());
            Method method = declaring.getDeclaredMethod(job.key.substring(job.key.indexOf('#') + 1),
                    io.quarkus.scheduler.ScheduledExecution.class);
            method.setAccessible(true);
            job.launchMethod = method;
            return method;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Once the call ended: a run that never got as far as its claim and lock (its call failed before) is told so, as an
     * error; any other is told how it ended by its run.
     */
    private static void notStarted(JobTick tick, String name, Throwable failure) {
        if (!tick.taken()) {
            tick.outcome().completeExceptionally(new IllegalStateException("Job '" + name + "' did not run now"
                    + (failure == null ? "" : ": " + failure), failure));
        }
    }

    @Override
    public CompletionStage<RunOutcome> launch(String dataSource, String name, JobTick tick) {
        LockedMethod job = job(dataSource, name);
        Runnable run = tick.elsewhere() == null ? () -> run(job, name, tick) : () -> elsewhere(job, name, tick);
        try {
            Infrastructure.getDefaultWorkerPool().execute(run);
        } catch (RejectedExecutionException e) {
            tick.outcome().completeExceptionally(new IllegalStateException("Job '" + name
                    + "' could not be run now: the application is shutting down", e));
        }
        return tick.outcome();
    }

    /**
     * A tick another instance fires (the test kit's): claimed and recorded as its run ({@link JobTick#elsewhere}), with
     * the job's policies, and without running the method here.
     */
    private void elsewhere(LockedMethod job, String name, JobTick tick) {
        try {
            JobTick fired = job.tick(new Object[] { new JobExecution(tick, name, job.description) });
            MySqlLockManager manager = job.dataSource == null ? locks.get()
                    : managers.select(new DataSource.DataSourceLiteral(job.dataSource)).get();
            manager.acquireForMethod(name, job.options, LockRequest.WhenBusy.NOTHING, fired);
        } catch (RuntimeException e) {
            tick.outcome().completeExceptionally(e);
        }
    }

    private void run(LockedMethod job, String name, JobTick tick) {
        ManagedContext requestContext = Arc.container().requestContext();
        boolean activated = !requestContext.isActive();
        if (activated) {
            requestContext.activate();
        }
        InstanceHandle<?> bean = null;
        try {
            Method method = method(job);
            if (method == null) {
                throw new IllegalStateException("the method of job '" + name + "' is gone");
            }
            Class<?> declaring = method.getDeclaringClass();
            String className = declaring.getName();
            // whatever its qualifiers: the bean the method is declared on
            InjectableInstance<?> beans = Arc.container().select(declaring, Any.Literal.INSTANCE);
            if (!beans.isResolvable()) {
                throw new IllegalStateException((beans.isAmbiguous() ? "several beans are " : "no bean is ") + className
                        + " to run job '" + name + "' on");
            }
            bean = beans.getHandle();
            Object result;
            try {
                result = method.invoke(bean.get(), new JobExecution(tick, name, job.description));
            } catch (InvocationTargetException e) {
                LOG.debugf(e.getCause(), "Job '%s' run now failed", name); // in its history, and told
                result = null;
                notStarted(tick, name, e.getCause());
            }
            if (result instanceof Uni<?> || result instanceof CompletionStage<?>) {
                // the run goes on: its request context and a dependent bean end with it
                Runnable end = ending(bean, activated ? requestContext : null);
                if (result instanceof Uni<?> uni) {
                    uni.subscribe().with(item -> end.run(), failure -> {
                        notStarted(tick, name, failure);
                        end.run();
                    });
                } else {
                    ((CompletionStage<?>) result).whenComplete((item, failure) -> {
                        notStarted(tick, name, failure);
                        end.run();
                    });
                }
                if (activated) {
                    requestContext.deactivate();
                }
                return;
            }
            notStarted(tick, name, null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            tick.outcome().completeExceptionally(new IllegalStateException("Job '" + name
                    + "' could not be run now: " + e, e));
        }
        ending(bean, null).run();
        if (activated) {
            requestContext.terminate();
        }
    }

    /**
     * What ends with a run: a {@code @Dependent} bean made for it, and the request context activated for it (its state
     * kept, so that a run that goes on elsewhere ends it there).
     */
    private static Runnable ending(InstanceHandle<?> bean, ManagedContext requestContext) {
        InjectableContext.ContextState state = requestContext == null ? null : requestContext.getStateIfActive();
        return () -> {
            if (bean != null && bean.getBean() != null
                    && bean.getBean().getScope() == jakarta.enterprise.context.Dependent.class) {
                bean.destroy();
            }
            if (state != null) {
                requestContext.destroy(state);
            }
        };
    }
}
