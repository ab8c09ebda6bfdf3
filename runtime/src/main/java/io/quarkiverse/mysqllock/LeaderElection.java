package io.quarkiverse.mysqllock;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One leader of a role at a time across every instance, for as long as it stays healthy, and a hand-over when it
 * stops: {@link LockManager#election(String)}.
 *
 * <pre>
 * &#64;Inject
 * LockManager locks;
 *
 * void onStart(&#64;Observes StartupEvent start) {
 *     locks.election("billing").join();
 * }
 *
 * void granted(&#64;Observes LeadershipGranted granted) { ... start the role's work, fenced with granted.term() ... }
 *
 * void revoked(&#64;Observes LeadershipRevoked revoked) { ... stop it ... }
 * </pre>
 *
 * The leader holds the lock {@code <role>#leader}; the other instances that joined wait for it (NAMED: on the server,
 * without polling, and take it as soon as it is released or the leader's session ends; LEASE: by the engine's bounded
 * polling, until the leader's lease ends). Each term is one hold of that lock, and its number is the hold's fencing
 * token: strictly increasing from term to term, so a resource can refuse the work of a leader that has been replaced.
 * A revocation is known to this instance within two keepalive intervals (NAMED) or before the lease can end (LEASE), and
 * announced by {@link LeadershipRevoked}; from then {@link #isLeader()} is false. No two instances ever say they lead at
 * once: on NAMED a term begins two keepalive intervals after its grant and ends when its session goes unconfirmed that
 * long ({@code quarkus.mysql-lock.named.instant-leader-hand-over=true} trades that for a hand-over in milliseconds).
 */
public interface LeaderElection extends AutoCloseable {

    /** How long {@link #stepDown()} stays out of the election, so that another instance takes over. */
    Duration DEFAULT_HAND_OVER = Duration.ofSeconds(5);

    /** The role elected. */
    String role();

    /** Joins the election: this instance campaigns until it leads, and again after each term. Idempotent. */
    LeaderElection join();

    /** Whether this instance leads now: it holds the role's lock and has not been told of its loss. */
    boolean isLeader();

    /**
     * Who leads the role now, whether or not this instance takes part (Curator's {@code getLeader()}): the holder of
     * the role's lock, read from the database, named after the role. When this instance leads, every field is exact
     * (its fencing token is the term). Another instance shows as {@link LockManager#inspect} shows a holder: on LEASE
     * its identity ({@code <host>/<pid>/<instance-id>}), since when and its term; on NAMED its server connection only.
     * Empty when no one leads (between terms, or nobody has joined). One statement; not on an event loop.
     */
    Optional<LockInfo> leader();

    /** The current term's number (its fencing token) while this instance leads; empty otherwise. */
    OptionalLong term();

    /**
     * Hands leadership over: if this instance leads, it gives the lock back ({@link LeadershipRevoked.Reason#STEPPED_DOWN})
     * and stays out of the election for {@link #DEFAULT_HAND_OVER}, so that an instance waiting for it takes it; then it
     * campaigns again.
     */
    void stepDown();

    /** As {@link #stepDown()}, staying out for {@code handOver}. */
    void stepDown(Duration handOver);

    /**
     * Leaves the election: gives the lock back if this instance leads ({@link LeadershipRevoked.Reason#LEFT}) and
     * campaigns no more until {@link #join()}. Done for every election when the application stops.
     */
    @Override
    void close();
}
