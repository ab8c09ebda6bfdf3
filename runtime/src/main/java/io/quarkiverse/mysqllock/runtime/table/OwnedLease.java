package io.quarkiverse.mysqllock.runtime.table;

import java.util.List;

/** A lease row as its owner knows it, for the statements that renew or give it up: only its owner's token matches. */
public interface OwnedLease {

    /** The name as the application gave it, for messages. */
    String name();

    /** The row's key. */
    String serverName();

    /** The holder identity and a token unique to the acquisition: the row's {@code owner}. */
    String ownerToken();

    /**
     * Every owner token the row may have for this acquisition: its token, and the one before an extension whose answer
     * was lost (an extension writes the new length into the token).
     */
    default List<String> ownerTokens() {
        return List.of(ownerToken());
    }
}
