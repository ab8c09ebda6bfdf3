package io.quarkiverse.mysqllock;

import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.ElementType.TYPE;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import java.lang.annotation.Retention;
import java.lang.annotation.Target;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

/**
 * A REST resource method that another service calls while it holds a lock: the request carries the lock's fencing token
 * in its {@value LockFence#HEADER} header ({@link LockFence}; the REST Client filter {@code LockFenceClientFilter} sends
 * it), and the method runs only if no request with a newer token of that lock came first. Otherwise it answers 409
 * Conflict ({@link FenceRefusedException}): the caller lost its lock, and a later holder's request reached this service
 * first. A request without the header is refused with 428 Precondition Required.
 * <p>
 * The newest token of each lock is kept in this service's own lock table ({@link FenceGuard}). Inside a
 * {@code @Transactional} method the check is part of the method's transaction, and a request with another token waits
 * for its commit: a stale request never writes to the lock datasource's database after a newer one. Without a
 * transaction the request is checked as it comes in, and a stale one that passed the check a moment before a newer one
 * may still write after it. The method must not run on an event loop (the check blocks).
 * <p>
 * The lock name is a template, as {@link Locked}'s: {@code @Fenced("order:{id}")} with an {@code id} parameter. It must
 * name the lock the caller holds: tokens are compared per lock. On methods only (on a class, the build fails: each
 * method names its own lock).
 */
@InterceptorBinding
@Target({ METHOD, TYPE })
@Retention(RUNTIME)
public @interface Fenced {

    /** The lock whose tokens the method accepts: literal text and {@code {parameter}} or {@code {parameter.property}}. */
    @Nonbinding
    String value();

    /**
     * The datasource whose lock table keeps the newest tokens, and in whose database the method's fenced writes land:
     * a MySQL or MariaDB datasource of the application. Empty: the lock datasource.
     */
    @Nonbinding
    String datasource() default "";
}
