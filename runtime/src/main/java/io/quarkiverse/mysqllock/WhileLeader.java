package io.quarkiverse.mysqllock;

import static java.lang.annotation.ElementType.METHOD;
import static java.lang.annotation.RetentionPolicy.RUNTIME;

import java.lang.annotation.Retention;
import java.lang.annotation.Target;

/**
 * Runs the method while this instance leads {@link #value() a role}: the application joins the role's
 * {@link LeaderElection} when it starts, calls the method on a thread of its own each time this instance is granted the
 * role, and interrupts that thread when the term ends (lost, stepped down, or the application stopping).
 *
 * <pre>
 * &#64;WhileLeader("billing")
 * void bill(long term) throws InterruptedException {
 *     while (true) {
 *         billNextBatch(term); // fence the work with the term
 *         Thread.sleep(1000); // an interrupt ends the term's work
 *     }
 * }
 * </pre>
 *
 * The method returns nothing and takes no parameter, the term ({@code long}), or the {@link LeadershipGranted} event.
 * It should return soon after it is interrupted: the election campaigns again only once the former term's work has
 * stopped, so that one instance never runs it twice at once. Returning on its own ends the work of this term (the
 * instance stays leader until the term ends); throwing is logged and steps down, so that another instance takes over.
 * Misuse (a private or static method, a return value, other parameters, a blank role) fails the build.
 */
@Target(METHOD)
@Retention(RUNTIME)
public @interface WhileLeader {

    /** The role: the name of its election (the rules of lock names apply). */
    String value();
}
