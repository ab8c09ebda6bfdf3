package io.quarkiverse.mysqllock.runtime.table;

/** A lease row as its owner knows it, for the statements that renew or give it up: only its owner's token matches. */
public interface OwnedLease {

    /** The name as the application gave it, for messages. */
    String name();

    /** The row's key. */
    String serverName();

    /** The holder identity and a token unique to the acquisition: the row's {@code owner}. */
    String ownerToken();
}
