package io.quarkiverse.mysqllock;

import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.TYPE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.Target;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

/**
 * Runs the method while holding a distributed lock. Unlike ArC's {@code @io.quarkus.arc.Lock} (a read/write lock
 * inside one JVM) and Lombok's {@code @Locked} (a {@code ReentrantLock} field), this lock is shared by every instance of
 * the application through the database.
 * <p>
 * Works on {@code void} methods, methods returning a value or an {@code Optional}, and asynchronous methods returning
 * {@code CompletionStage} or {@code Uni}: the lock is then held until the result completes (for {@code Uni}, from
 * subscription to termination or cancellation: a cancellation once the method was called ends the lock at once,
 * whatever {@link #atLeastFor()}, and tells the {@code onLost} listeners of its {@code LockHandle}, reason
 * {@code CANCELLED}, since work that ignores the cancellation runs on without it). A lock lost while the method ran is
 * never hidden: the call throws {@link LockLostException} after the method returns (an asynchronous result fails with
 * it). {@code Multi} is refused at build time. Everything is checked when the
 * application is built: a template naming a parameter or property that does not exist, a private or static method,
 * or a bad duration fails the build with a message naming the method.
 * <p>
 * On a {@code @Scheduled} method with a {@code ScheduledExecution} parameter, each tick (the trigger's scheduled fire
 * time) runs once across the cluster: the instance that gets the lock claims the tick in the lock table, and an instance
 * that fires the same tick later returns without running it, whatever {@code onBusy} says. Use {@code onBusy = SKIP}
 * there, so that the instances that find the lock busy skip the tick instead of failing.
 */
@Inherited
@InterceptorBinding
@Target({ METHOD, TYPE })
@Retention(RUNTIME)
public @interface Locked {

    /**
     * The lock name template. Empty: {@code <declaring class FQCN>#<method>}. {@code {param}} and
     * {@code {param.property}} take values from the method's arguments ({@code String.valueOf} of the value;
     * {@code null} becomes {@code "null"}); a property is a record component, a getter ({@code getX()}, {@code isX()})
     * or a public field. Parameters can also be named by position: {@code {0}}. Write {@code {{} and {@code }}} for
     * literal braces. Never read from config ({@code ${...}} fails the build): instances configured differently would
     * take different locks and not exclude each other. A name may not begin with {@code tick@}, the prefix of the lock
     * table's rows of scheduled ticks: a template that does fails the build, and a name built so from the arguments
     * throws {@link IllegalArgumentException}.
     */
    @Nonbinding
    String value() default "";

    /**
     * How long to wait for the lock, in Quarkus duration syntax ({@code 5s}, {@code PT5S}). This member,
     * {@link #atLeastFor()} and {@link #atMostFor()} may be config expressions, {@code ${property}} or
     * {@code ${property:default}}, resolved when the application starts (which fails if one cannot be).
     */
    @Nonbinding
    String waitFor() default "0s";

    /** What to do when the lock stays busy for the whole wait. */
    @Nonbinding
    OnBusy onBusy() default OnBusy.FAIL;

    /**
     * Keep holding the lock until this long after the method started, even if it returns earlier, without holding the
     * caller's thread. The lock kept is no longer the caller's: calling the method again on the same thread meanwhile
     * contends for it. For cron jobs prefer a {@code ScheduledExecution} parameter, which makes each tick run once
     * whatever the delays; this only narrows the window in which a late instance runs a tick again. A cancelled
     * {@code Uni} result (or Kotlin {@code suspend} call) ends the lock at once all the same.
     */
    @Nonbinding
    String atLeastFor() default "0s";

    /**
     * The lock ends this long after it was granted, even if the method still runs (the call then throws
     * {@link LockLostException}, reason {@code LEASE_EXPIRED}, after the method returns, or the method is interrupted
     * with {@link #interruptOnLoss()}); at least 500 ms. LEASE: the lease lasts this long unrenewed, so a dead holder's
     * lock ends then too; NAMED: this process releases the lock then. Empty: no cap, held until the method ends.
     */
    @Nonbinding
    String atMostFor() default "";

    /**
     * How the lock is shared: {@link Mode#EXCLUSIVE} (one holder), {@link Mode#READ} or {@link Mode#WRITE} (the read or
     * write lock of {@link LockManager#readWriteLock}: many readers or one writer), {@link Mode#PERMIT} (a permit of
     * {@link LockManager#semaphore} with {@link #permits()} permits). The shared modes need a method that returns
     * neither {@code Uni} nor {@code CompletionStage}, and take no {@code atLeastFor}, {@code atMostFor} or
     * scheduled-tick claim; the build says so if one is asked for.
     */
    @Nonbinding
    Mode mode() default Mode.EXCLUSIVE;

    /**
     * {@link Mode#PERMIT}: how many holders at once, 1 to {@link DistributedSemaphore#MAX_PERMITS}; 0 otherwise. The
     * number the fleet stores at the semaphore's first use anywhere wins over it ({@link DistributedSemaphore}).
     */
    @Nonbinding
    int permits() default 0;

    /**
     * If the lock is lost while the method runs (its {@link #atMostFor()} cap reached, its connection or lease lost),
     * the thread running it is interrupted, so that a method blocked in I/O or a wait stops instead of running on
     * unprotected; its caller then gets the method's exception, or a {@link LockLostException} if it returned. The
     * interrupt this caused is cleared when the method ends, and none comes after it. For methods that block (the
     * build refuses it on a {@code Uni} or {@code CompletionStage} method, which no thread runs). Off by default: code
     * that does not expect interrupts may misbehave on one.
     */
    @Nonbinding
    boolean interruptOnLoss() default false;

    /**
     * The datasource whose {@code LockManager} takes the lock, by its Quarkus name ({@code <default>} for the default
     * one). Empty: the lock datasource ({@code quarkus.mysql-lock.datasource}, else the default). The build fails if no
     * MySQL or MariaDB datasource has that name.
     */
    @Nonbinding
    String datasource() default "";

    /** How a {@code @Locked} method shares its lock. */
    enum Mode {
        /** One holder at a time: {@link LockManager#acquire}. */
        EXCLUSIVE,
        /** A reader of the name's {@link DistributedReadWriteLock}: many at once, none beside a writer. */
        READ,
        /** The writer of the name's {@link DistributedReadWriteLock}: alone, no reader inside. */
        WRITE,
        /** A permit of the name's {@link DistributedSemaphore} of {@link Locked#permits()} permits. */
        PERMIT
    }
}
