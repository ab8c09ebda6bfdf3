package io.quarkiverse.mysqllock.runtime.jobs;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

import io.quarkiverse.mysqllock.LockHandle;
import io.quarkiverse.mysqllock.LockLostException;
import io.quarkiverse.mysqllock.jobs.RunOutcome;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandle;
import io.quarkiverse.mysqllock.runtime.engine.ControlledHandleDecorator;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics;
import io.quarkiverse.mysqllock.runtime.engine.LockMetrics.MethodOutcome;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * The lock of a job's run, with the run's row of the history: the {@code @Locked} interceptor tells it how the run ended
 * ({@link #ended(LockHandle, MethodOutcome, Throwable)}), once, and the end is recorded off the event loop. A history
 * that cannot be written is logged, and changes nothing of the run.
 */
public final class JobRunHandle extends ControlledHandleDecorator {

    private static final Logger LOG = Logger.getLogger(JobRunHandle.class);

    private final JobStore store;
    private final String name;
    private final String serverName;
    private final long id;
    private final JobTick tick;
    private final Executor worker;
    private final LockMetrics metrics;
    /** When the run started ({@link System#nanoTime()}), for its duration. */
    private final long startNanos = System.nanoTime();
    private final AtomicBoolean ended = new AtomicBoolean();
    /** Whether the method's body was called: a run released before it never ran (its call was cancelled). */
    private volatile boolean began;
    /** Which of the run's end recorded ({@link #RECORDED}) and its lock released ({@link #RELEASED}) happened. */
    private final AtomicInteger over = new AtomicInteger();
    private static final int RECORDED = 1;
    private static final int RELEASED = 2;

    /** The id of a run whose start could not be written: its end is not written either, only told. */
    static final long NOT_RECORDED = -1;

    JobRunHandle(ControlledHandle handle, JobStore store, String name, String serverName, long id, JobTick tick,
            Executor worker, LockMetrics metrics) {
        super(handle);
        this.metrics = metrics;
        this.store = store;
        this.name = name;
        this.serverName = serverName;
        this.id = id;
        this.tick = tick;
        this.worker = worker;
    }

    /** Tells the run of {@code handle}, if it is one, that the method's body is called now. */
    public static void began(LockHandle handle) {
        if (handle instanceof JobRunHandle run) {
            run.began = true;
        }
    }

    /** Released before the method's body was called: its call was cancelled while its lock was granted. */
    @Override
    public void release() {
        super.release();
        endedUnlessBegun();
        over(RELEASED);
    }

    @Override
    public LockLostException releaseReportingLoss() {
        LockLostException lost = super.releaseReportingLoss();
        endedUnlessBegun();
        over(RELEASED);
        return lost;
    }

    @Override
    public void abandon(String why) {
        super.abandon(why);
        endedUnlessBegun();
        over(RELEASED);
    }

    /**
     * Once the run's end is recorded and its lock released (after its {@code atLeastFor}, if it has one), whichever
     * comes last: the tick is told ({@link JobTick#released}).
     */
    private void over(int what) {
        int before = over.getAndUpdate(done -> done | what);
        if ((before & what) == 0 && (before | what) == (RECORDED | RELEASED)) {
            tick.released();
        }
    }

    private void endedUnlessBegun() {
        if (!began) {
            ended(RunOutcome.CANCELLED, null);
        }
    }

    /** Tells the run of {@code handle}, if it is one, how the method that ran it ended. */
    public static void ended(LockHandle handle, MethodOutcome outcome, Throwable failure) {
        if (handle instanceof JobRunHandle run) {
            run.ended(switch (outcome) {
                case RAN -> RunOutcome.SUCCEEDED;
                case LOST -> RunOutcome.LOST;
                default -> RunOutcome.FAILED;
            }, failure);
        }
    }

    /** Tells the run of {@code handle}, if it is one, that its call was cancelled. */
    public static void cancelled(LockHandle handle) {
        if (handle instanceof JobRunHandle run) {
            run.ended(RunOutcome.CANCELLED, null);
        }
    }

    private void ended(RunOutcome outcome, Throwable failure) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        metrics.jobRun(name, outcome, System.nanoTime() - startNanos);
        Runnable record = () -> {
            try {
                if (id != NOT_RECORDED) {
                    store.ended(name, serverName, id, outcome, failure);
                }
            } catch (RuntimeException e) {
                LOG.warnf("The end of a run of job '%s' (%s) is not in its history: %s", name, outcome, e.getMessage());
            } finally {
                tick.told(outcome); // once its history says so, for whoever reads it then
                over(RECORDED);
            }
            Trimming.later(store, name, serverName, worker);
        };
        if (BlockingOperationControl.isBlockingAllowed()) {
            Uninterrupted.run(record); // interruptOnLoss may have interrupted the thread that ran it
            return;
        }
        try {
            worker.execute(record);
        } catch (RejectedExecutionException e) {
            record.run(); // the workers are shutting down: better late on this thread than never
        }
    }
}
