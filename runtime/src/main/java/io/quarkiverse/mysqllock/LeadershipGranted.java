package io.quarkiverse.mysqllock;

/**
 * This instance leads {@code role} from now on, for term {@code term}: a CDI event, to {@code @Observes} and
 * {@code @ObservesAsync} observers. Synchronous observers run on the election's thread, and get a term's grant before
 * its revocation: keep them short (start the role's work elsewhere). Asynchronous observers get each event as a task
 * of its own, not necessarily in order. An observer that throws is logged and changes nothing.
 *
 * @param role the role elected
 * @param term the term's number: its lock's fencing token, strictly increasing from term to term
 */
public record LeadershipGranted(String role, long term) {
}
