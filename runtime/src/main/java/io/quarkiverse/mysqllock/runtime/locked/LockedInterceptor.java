package io.quarkiverse.mysqllock.runtime.locked;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.transaction.Transaction;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.LockNotAcquiredException;
import io.quarkiverse.mysqllock.LockSkipped;
import io.quarkiverse.mysqllock.Locked;
import io.quarkiverse.mysqllock.OnBusy;
import io.quarkiverse.mysqllock.runtime.MySqlLockManager;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics.MethodOutcome;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;
import io.quarkiverse.mysqllock.runtime.engine.LossInterrupt;
import io.quarkiverse.mysqllock.runtime.engine.UniUnderLock;
import io.quarkiverse.mysqllock.runtime.features.HandleReleases;
import io.quarkiverse.mysqllock.runtime.features.MethodLock;
import io.quarkiverse.mysqllock.runtime.jobs.JobRunHandle;
import io.quarkiverse.mysqllock.runtime.jobs.JobTick;
import io.quarkus.runtime.BlockingOperationControl;
import io.smallrye.mutiny.Uni;

/**
 * Holds the lock of a {@link Locked} method around its invocation, or around its asynchronous result.
 * <p>
 * Its priority ({@code PLATFORM_AFTER + 100}) is higher than that of SmallRye Fault Tolerance's interceptor
 * ({@code PLATFORM_AFTER + 10}), so it runs inside it: {@code @Retry}, {@code @Timeout} and {@code @Fallback} see
 * {@code LockNotAcquiredException}. It runs inside {@code @Transactional} too: a lock released while a transaction is
 * open is released once that transaction has ended, so that its commit happens under the lock.
 */
@Locked
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_AFTER + 100)
public class LockedInterceptor {

    private static final Logger LOG = Logger.getLogger(LockedInterceptor.class);

    @Inject
    LockedMethods methods;

    @Inject
    MySqlLockManager locks;

    /** Every datasource's manager, for the methods of {@code @Locked(datasource = ...)}. */
    @Inject
    DataSourceManagers managers;

    @Inject
    Event<LockSkipped> skips;

    @AroundInvoke
    Object lock(InvocationContext context) throws Exception {
        LockedMethod method = methods.of(context.getMethod());
        String name = method.lockName(context.getParameters());
        return switch (method.kind) {
            case UNI -> lockUni(context, method, name);
            case SUSPEND, SUSPEND_UNIT -> lockSuspending(context, method, name);
            case COMPLETION_STAGE -> lockCompletionStage(context, method, name);
            default -> lockBlocking(context, method, name);
        };
    }

    private Object lockBlocking(InvocationContext context, LockedMethod method, String name) throws Exception {
        if (!BlockingOperationControl.isBlockingAllowed()) {
            throw new IllegalStateException(method.description + " is @Locked and blocks while it acquires its lock,"
                    + " but it was called on an event-loop thread. Return Uni or CompletionStage from it, or run it on a"
                    + " worker thread (@Blocking)");
        }
        long start = System.nanoTime();
        LockHandle handle;
        try {
            handle = method.mode != Locked.Mode.EXCLUSIVE ? acquireShared(method, name)
                    : manager(method).acquireForMethod(name, method.options,
                            method.onBusy == OnBusy.FAIL ? WhenBusy.THROW : WhenBusy.NOTHING, tick(context, method));
        } catch (RuntimeException e) {
            ended(method, MethodOutcome.NOT_ACQUIRED, start);
            throw e;
        }
        if (handle == null) {
            skipped(context, method, name, start);
            return method.kind == ReturnKind.OPTIONAL ? Optional.empty() : null;
        }
        if (!handle.isValid()) {
            throw notRun(handle, method, name, start);
        }
        LossInterrupt interrupt = method.options.interruptsOnLoss() ? LossInterrupt.arm(handle) : null;
        MethodLock previous = given(context, method, handle).enter();
        Object result;
        try {
            result = context.proceed();
        } catch (Throwable failure) {
            leave(previous, interrupt);
            LockLostException lost = release(handle, method, start);
            ran(method, handle, MethodOutcome.ran(lost, failure), failure, start);
            ControlledHandle.withLoss(failure, method.description, lost);
            throw failure; // rethrown as caught: the method's own checked exceptions stay declarable
        }
        leave(previous, interrupt);
        LockLostException lost = release(handle, method, start);
        ran(method, handle, MethodOutcome.ran(lost, null), null, start);
        if (lost != null) {
            throw ControlledHandle.lostDuring(method.description, lost);
        }
        return result;
    }

    /** The manager that takes the method's lock: its datasource's, or the lock datasource's. */
    private MySqlLockManager manager(LockedMethod method) {
        return managers.of(method.dataSource);
    }

    /** The method's view of its lock, given to its {@code LockHandle} parameter if it has one. */
    private MethodLock given(InvocationContext context, LockedMethod method, LockHandle handle) {
        JobRunHandle.began(handle);
        MethodLock view = new MethodLock(handle, manager(method), method.description);
        if (method.handleParameter >= 0) {
            Object[] arguments = context.getParameters();
            arguments[method.handleParameter] = view;
            context.setParameters(arguments);
        }
        return view;
    }

    /**
     * Runs an asynchronous method's body, its lock current on this thread meanwhile (the assembly of its result; what
     * runs later, on other threads, reaches the lock through a {@code LockHandle} parameter).
     */
    private Object proceedAsync(InvocationContext context, LockedMethod method, LockHandle handle) throws Exception {
        MethodLock lock = given(context, method, handle);
        if (method.kind.suspends()) {
            return Suspending.get().run(context, lock); // the body starts later, on the caller's dispatcher
        }
        MethodLock previous = lock.enter();
        try {
            return returned(context.proceed(), method);
        } finally {
            MethodLock.restore(previous);
        }
    }

    /**
     * A Kotlin {@code suspend} function: held as a {@code Uni} method's lock is, from the call to the function's
     * completion (not its first suspension), its caller suspended meanwhile and resumed with the outcome. ArC intercepts
     * only open suspend functions, whose resumptions run kotlinc's static body ({@code name$suspendImpl}) without
     * passing here again.
     */
    private Object lockSuspending(InvocationContext context, LockedMethod method, String name) {
        Object[] arguments = context.getParameters();
        return Suspending.get().suspendUntil(arguments[arguments.length - 1], (Uni<?>) lockUni(context, method, name),
                method.kind == ReturnKind.SUSPEND_UNIT);
    }

    /** The method's body ended: the lock is no longer the thread's current one, and a loss interrupts no more. */
    private static void leave(MethodLock previous, LossInterrupt interrupt) {
        MethodLock.restore(previous);
        if (interrupt != null) {
            interrupt.disarm();
        }
    }

    private Object lockUni(InvocationContext context, LockedMethod method, String name) {
        Transaction askedIn = manager(method).openTransaction(); // a @Transactional caller's, before it suspends it
        return new UniUnderLock(() -> acquireAsync(context, method, name, askedIn),
                handle -> {
                    if (!handle.isValid()) {
                        LockLostException lost = ControlledHandle.lostBefore(method.description, name, handle);
                        JobRunHandle.ended(handle, MethodOutcome.LOST, lost); // before the release: it did not begin
                        return Uni.createFrom().failure(lost);
                    }
                    return (Uni<?>) proceedAsync(context, method, handle);
                }, new UniUnderLock.Outcomes() {
                    @Override
                    public boolean skips(Throwable failure) {
                        return LockedInterceptor.skips(method, failure);
                    }

                    @Override
                    public void skipped(long startNanos) {
                        LockedInterceptor.this.skipped(context, method, name, startNanos);
                    }

                    @Override
                    public void ended(ControlledHandle handle, MethodOutcome outcome, Throwable failure,
                            long startNanos) {
                        ran(method, handle, outcome, failure, startNanos);
                    }

                    @Override
                    public LockLostException release(ControlledHandle handle, long startNanos) {
                        return LockedInterceptor.this.release(handle, method, startNanos);
                    }

                    @Override
                    public Throwable withLoss(Throwable failure, LockLostException lost) {
                        return ControlledHandle.withLoss(failure, method.description, lost);
                    }

                    @Override
                    public Throwable lost(LockLostException lost) {
                        return ControlledHandle.lostDuring(method.description, lost);
                    }

                    /**
                     * Work that ignores the cancellation (a {@code CompletionStage} behind the {@code Uni}, a future a
                     * suspend function stopped awaiting) runs on without the lock: the method's {@code onLost}
                     * listeners hear it ({@code CANCELLED}) before the release, and the lock ends now, whatever its
                     * {@code atLeastFor}.
                     */
                    @Override
                    public void cancelled(ControlledHandle handle, long startNanos) {
                        handle.abandon((method.kind.suspends() ? "the call of " : "the Uni of ") + method.description
                                + " was cancelled; work of it that goes on runs without the lock");
                        JobRunHandle.cancelled(handle);
                    }

                    /** A Kotlin body ends with {@code CancellationException} when its caller is cancelled. */
                    @Override
                    public boolean cancelledBy(Throwable failure) {
                        return method.kind.suspends() && failure instanceof CancellationException;
                    }
                });
    }

    private Object lockCompletionStage(InvocationContext context, LockedMethod method, String name) {
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        long start = System.nanoTime();
        acquireAsync(context, method, name, manager(method).openTransaction()).subscribe().with(handle -> {
            if (handle == null) {
                skipped(context, method, name, start);
                outcome.complete(null);
                return;
            }
            if (!handle.isValid()) {
                outcome.completeExceptionally(notRun(handle, method, name, start));
                return;
            }
            CompletionStage<?> stage;
            try {
                stage = (CompletionStage<?>) proceedAsync(context, method, handle);
            } catch (Throwable e) {
                // an Error too: thrown into Mutiny's callback, it would leave the caller waiting and the lock held
                LockLostException lost = release(handle, method, start);
                ran(method, handle, MethodOutcome.ran(lost, e), e, start);
                outcome.completeExceptionally(ControlledHandle.withLoss(e, method.description, lost));
                return;
            }
            stage.whenComplete((value, failure) -> {
                LockLostException lost = release(handle, method, start);
                ran(method, handle, MethodOutcome.ran(lost, failure), failure, start);
                if (failure != null) {
                    outcome.completeExceptionally(ControlledHandle.withLoss(failure, method.description, lost));
                } else if (lost != null) {
                    outcome.completeExceptionally(ControlledHandle.lostDuring(method.description, lost));
                } else {
                    outcome.complete(value);
                }
            });
        }, failure -> {
            if (skips(method, failure)) {
                skipped(context, method, name, start);
                outcome.complete(null);
            } else {
                ended(method, MethodOutcome.NOT_ACQUIRED, start);
                outcome.completeExceptionally(failure);
            }
        });
        return outcome;
    }

    /**
     * A read or write lock, or a permit (mode READ, WRITE, PERMIT: blocking methods only, checked by the build); null if
     * still busy at the end of the wait and {@code onBusy = SKIP}.
     */
    private LockHandle acquireShared(LockedMethod method, String name) {
        boolean skip = method.onBusy == OnBusy.SKIP;
        Duration wait = method.waitFor();
        Optional<LockHandle> handle = switch (method.mode) {
            case READ -> skip ? manager(method).readWriteLock(name).tryAcquireRead(wait)
                    : Optional.of(manager(method).readWriteLock(name).acquireRead(wait));
            case WRITE -> skip ? manager(method).readWriteLock(name).tryAcquireWrite(wait)
                    : Optional.of(manager(method).readWriteLock(name).acquireWrite(wait));
            case PERMIT -> skip ? manager(method).semaphore(name, method.permits).tryAcquire(wait)
                    : Optional.of(manager(method).semaphore(name, method.permits).acquire(wait));
            case EXCLUSIVE -> throw new IllegalStateException(method.description + " takes an exclusive lock");
        };
        return handle.orElse(null);
    }

    /**
     * The lock, or a null item when the tick of a scheduled method already ran elsewhere; released after the transaction
     * open where the method was called, if any, has ended.
     */
    private Uni<ControlledHandle> acquireAsync(InvocationContext context, LockedMethod method, String name,
            Transaction askedIn) {
        return manager(method).acquireForMethodAsync(name, method.options, tick(context, method), askedIn);
    }

    /** The tick of this run (or its run-now), for a method that claims its ticks; null otherwise. */
    private static JobTick tick(InvocationContext context, LockedMethod method) {
        return method.tickParameter < 0 ? null : method.tick(context.getParameters());
    }

    private static boolean skips(LockedMethod method, Throwable failure) {
        return method.onBusy == OnBusy.SKIP && failure instanceof LockNotAcquiredException notAcquired
                && notAcquired.reason() == LockNotAcquiredException.Reason.BUSY;
    }

    /** Counts the call in {@code mysql.lock.method}, tagged with the method, never the resolved lock name. */
    private void ended(LockedMethod method, MethodOutcome outcome, long start) {
        manager(method).metrics().method(method.key, outcome, System.nanoTime() - start);
    }

    /**
     * A lock lost after it was granted and before the method's body began: a job's run is recorded in its history
     * between the two, a statement a stalled database holds up while the lock's session fails or its lease ends. The
     * body does not run without its lock: the caller is told with this, the call recorded as lost (a job's run:
     * {@code LOST} in its history) and the lock released by each path as it ends a call.
     */
    private LockLostException notRun(LockHandle handle, LockedMethod method, String name, long start) {
        LockLostException lost = ControlledHandle.lostBefore(method.description, name, handle);
        ran(method, handle, MethodOutcome.LOST, lost, start);
        release(handle, method, start);
        return lost;
    }

    /** A call that ran ended: its metrics, and the history of a job's run ({@link JobRunHandle}). */
    private void ran(LockedMethod method, LockHandle handle, MethodOutcome outcome, Throwable failure, long start) {
        ended(method, outcome, start);
        JobRunHandle.ended(handle, outcome, failure);
    }

    private void skipped(InvocationContext context, LockedMethod method, String name, long start) {
        ended(method, MethodOutcome.SKIPPED, start);
        if (LOG.isDebugEnabled()) {
            JobTick tick = tick(context, method);
            LOG.debugf("Skipped %s after %d ms: lock '%s' is held elsewhere%s", method.description,
                    Duration.ofNanos(System.nanoTime() - start).toMillis(), name,
                    tick == null ? "" : ", or its tick " + Instant.ofEpochMilli(tick.tick()) + " already ran");
        }
        try {
            skips.fire(new LockSkipped(name, method.key));
        } catch (RuntimeException | Error e) {
            // an observer's failure changes nothing: the method was skipped, and its caller must hear so (a
            // CompletionStage caller would otherwise wait for ever)
            LOG.errorf(e, "An observer of LockSkipped failed for %s; the method was skipped all the same",
                    method.description);
        }
    }

    /**
     * Releases now, or once {@code atLeastFor} has passed since the method started, without holding any thread; returns
     * the loss of the lock while the method ran, if any (found by the release itself when it happens now). A late
     * release no longer belongs to the caller's call: the thread cannot nest onto it, and must contend for it again.
     */
    private LockLostException release(LockHandle handle, LockedMethod method, long start) {
        return handle instanceof ControlledHandle controlled
                ? manager(method).held(controlled, start, method.options).releaseReportingLoss()
                : HandleReleases.releaseReportingLoss(handle);
    }

    /** What an asynchronous method returned: never null, which would leave its lock held for nothing. */
    private static Object returned(Object result, LockedMethod method) {
        if (result == null) {
            throw new NullPointerException(method.description + " returned null instead of a "
                    + (method.kind == ReturnKind.UNI ? "Uni" : "CompletionStage") + "; its lock was released");
        }
        return result;
    }

}
